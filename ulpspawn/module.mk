ifeq ($(ARCH),x86_64)
$(eval $(call LAUNCH_TOOL,ulpspawn))
endif
