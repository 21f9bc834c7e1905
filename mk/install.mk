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
	[ ! -f $(O)/libulp.so.$(VERSION) ] || { install -m 644 $(O)/libulp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/ && \
		ln -sf libulp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) && \
		ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libulp.so; }
	[ ! -f $(O)/bin/ulpexec ] || install -m 755 $(O)/bin/ulpexec $(DESTDIR)$(BINDIR)/
	[ ! -f $(O)/bin/ulpspawn ] || install -m 755 $(O)/bin/ulpspawn $(DESTDIR)$(BINDIR)/
	[ ! -f $(O)/bin/ulps ] || install -m 755 $(O)/bin/ulps $(DESTDIR)$(BINDIR)/
	[ ! -f $(O)/libulp-mpiyield.so ] || { install -d $(DESTDIR)$(LIBDIR)/ulp && \
		install -m 644 $(O)/libulp-mpiyield.so $(DESTDIR)$(LIBDIR)/ulp/; }
	install -m 644 $(O)/libulp.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	if ls docs/man/*.[0-9] >/dev/null 2>&1; then for m in docs/man/*.[0-9]; do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done; fi
INSTALL_TARGETS += install-files

# make lint: the user-space sources in the repository's .clang-format style, cppcheck on them,
# the layering (lint-layers), and checkpatch/sparse on the kernel module (lint-kmod, kmod/module.mk).
LINT_SRCS = $(shell git ls-files 'libulp/*.[ch]' 'loader/*.[ch]' 'ulpexec/*.[ch]' \
	'ulpspawn/*.[ch]' 'ulps/*.[ch]' 'launch/*.[ch]' include/ulp.h include/pvas.h 'tests/unit/*.c' 'tests/pvas/*.c' 'tests/mpi/*.c' \
	tests/check.h 2>/dev/null)
.PHONY: lint-user
lint-user:
	$(Q)clang-format --dry-run --Werror $(LINT_SRCS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -D__x86_64__ \
		-Iinclude -Ilibulp -Ilibulp/sched -Ilibulp/arch -Ilibulp/arch/x86_64 -Iloader -Ilibulp/kernel \
		$(filter %.c,$(LINT_SRCS))
	@echo "lint: clang-format and cppcheck clean"
# The include rules (no lower layer includes a higher one; tools only include/ and launch/),
# from the compiler's -MM output: mk/lint-layers.sh.
.PHONY: lint-layers
lint-layers:
	$(Q)sh mk/lint-layers.sh $(CC)
lint: lint-user lint-layers

# The shared library libulp.so.0: the objects of libulp.a (all built with -fPIC). -z defs: every
# symbol it needs is named here, so a program links it with -lulp alone.
ifeq ($(ARCH),x86_64)
SONAME := libulp.so.0
$(O)/libulp.so.$(VERSION): $(LIBULP_CORE_OBJS) $(LIBULP_PVAS_OBJS) $(LOADER_OBJS)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -Wl,-z,relro -Wl,-z,now $(LDFLAGS) \
		-o $@ $^ $(LDLIBS_ULP)
$(O)/$(SONAME) $(O)/libulp.so: $(O)/libulp.so.$(VERSION)
	$(Q)ln -sf $(notdir $<) $@
ALL_TARGETS += $(O)/libulp.so.$(VERSION) $(O)/$(SONAME) $(O)/libulp.so
endif

# make deb: Debian packages libulp0, libulp-dev, ulp-tools, pvas-dkms into $(O)/deb (debian/,
# mk/deb.sh); lintian errors fail it.
.PHONY: deb
deb:
	$(Q)sh mk/deps.sh build deb
	$(Q)sh mk/deb.sh $(O)/deb
