# make install PREFIX=/usr/local DESTDIR=: tools, libraries, headers, pkg-config file.
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

$(O)/libulp.pc: mk/libulp.pc.in
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' $< >$@
ALL_TARGETS += $(O)/libulp.pc

.PHONY: install-files
install-files: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR)
	install -m 644 include/ulp.h include/pvas.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(O)/libulp-core.a $(DESTDIR)$(LIBDIR)/
	[ ! -f $(O)/libulp.a ] || install -m 644 $(O)/libulp.a $(O)/libpvas-guest.a $(DESTDIR)$(LIBDIR)/
	[ ! -f $(O)/bin/ulpexec ] || install -m 755 $(O)/bin/ulpexec $(DESTDIR)$(BINDIR)/
	[ ! -f $(O)/bin/ulpspawn ] || install -m 755 $(O)/bin/ulpspawn $(DESTDIR)$(BINDIR)/
	install -m 644 $(O)/libulp.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	if ls docs/man/*.[0-9] >/dev/null 2>&1; then for m in docs/man/*.[0-9]; do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done; fi
INSTALL_TARGETS += install-files

# make lint: the user-space sources in the repository's .clang-format style, cppcheck on them,
# and checkpatch/sparse on the kernel module (lint-kmod, kmod/module.mk).
LINT_SRCS = $(shell git ls-files 'libulp/*.[ch]' 'loader/*.[ch]' 'ulpexec/*.[ch]' \
	'ulpspawn/*.[ch]' 'launch/*.[ch]' include/ulp.h include/pvas.h 'tests/unit/*.c' 'tests/pvas/*.c' 'tests/mpi/*.c' \
	tests/check.h 2>/dev/null)
.PHONY: lint-user
lint-user:
	$(Q)clang-format --dry-run --Werror $(LINT_SRCS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -D__x86_64__ \
		-Iinclude -Ilibulp -Ilibulp/sched -Ilibulp/arch -Ilibulp/arch/x86_64 -Iloader -Ilibulp/kernel \
		$(filter %.c,$(LINT_SRCS))
	@echo "lint: clang-format and cppcheck clean"
lint: lint-user
