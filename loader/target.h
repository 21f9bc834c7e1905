/* SPDX-License-Identifier: MIT */
/*
 * The one place that names the machine the loader accepts. The Makefile builds the loader only
 * for ARCH=x86_64; another architecture would get its own values here (chosen by the Makefile),
 * never an #ifdef in the loader's code.
 */
#ifndef ULP_LOADER_TARGET_H
#define ULP_LOADER_TARGET_H

#include <elf.h>

#define ULP_LD_MACHINE EM_X86_64     /* e_machine of the programs we run */
#define ULP_LD_MACHINE_NAME "x86_64" /* for messages */
#define ULP_LD_CLASS ELFCLASS64
#define ULP_LD_DATA ELFDATA2LSB	 /* byte order */
#define ULP_LD_PLATFORM "x86_64" /* the AT_PLATFORM string */

#endif
