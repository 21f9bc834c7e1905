#!/bin/sh
# Derive the broken programs the loader must refuse from the fixtures make has compiled.
# Usage: tests/loader/mkfixtures.sh FIXDIR   (FIXDIR holds hello-dyn and elfpatch)
set -e
d=$1
p="$d/elfpatch"
size=$(wc -c <"$d/hello-dyn")

copy() { rm -rf "$d/$1"; cp "$d/hello-dyn" "$d/$1"; }

# Files that are not programs.
rm -rf "$d/empty" "$d/dir" "$d/fifo" "$d/script"
: >"$d/empty"; chmod 755 "$d/empty"
mkdir "$d/dir"
mkfifo "$d/fifo"; chmod 755 "$d/fifo"
printf '#!/bin/sh\necho hi\n' >"$d/script"; chmod 755 "$d/script"
copy noexec; chmod 644 "$d/noexec"

# Truncated copies: inside the ELF header, inside the program headers, inside the segments.
head -c 40 "$d/hello-dyn" >"$d/trunc-ehdr"
head -c 200 "$d/hello-dyn" >"$d/trunc-phdr"
head -c $((size / 2)) "$d/hello-dyn" >"$d/trunc-seg"
chmod 755 "$d/trunc-ehdr" "$d/trunc-phdr" "$d/trunc-seg"

# One damaged field each.
copy class32;    "$p" "$d/class32" ident 4 1
copy bigendian;  "$p" "$d/bigendian" ident 5 2
copy core;       "$p" "$d/core" ehdr type 4
copy bad-phoff;  "$p" "$d/bad-phoff" ehdr phoff 0xffffff00
copy bad-entry;  "$p" "$d/bad-entry" ehdr entry 0x7fff0000
copy no-entry;   "$p" "$d/no-entry" ehdr entry 0
copy noload;     "$p" "$d/noload" noload
copy filesz-gt-memsz; "$p" "$d/filesz-gt-memsz" seg 1 0 memsz -8
copy misaligned; "$p" "$d/misaligned" seg 1 1 offset +8
copy overflow;   "$p" "$d/overflow" seg 1 1 vaddr 0xfffffffffffff000
copy phdr-unmapped; "$p" "$d/phdr-unmapped" seg 6 0 vaddr 0x100000   # PT_PHDR
copy interp-no-nul; "$p" "$d/interp-no-nul" seg 3 0 filesz -1        # PT_INTERP
copy seg-past-eof; "$p" "$d/seg-past-eof" seg 1 1 filesz $((size))

# Interpreter trouble: missing, and one that is no x86_64 program itself.
copy bad-interp;    "$p" "$d/bad-interp" interp /nonexistent/ld-linux-x86-64.so.2
copy interp-arm;    "$p" "$d/interp-arm" interp "$(cd "$d" && pwd)/hello-aarch64"
copy interp-dyn;    "$p" "$d/interp-dyn" interp "$(cd "$d" && pwd)/hello-dyn"
copy interp-noexec; "$p" "$d/interp-noexec" interp "$(cd "$d" && pwd)/noexec"
: >"$d/stamp"
