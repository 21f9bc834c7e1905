# Step "debs" of tests/fresh/run.sh (bash -e, in the chroot, in /root/libulp, after "check"):
# install the packages of `make deb` (mounted on /debs) with apt as a user would, then use them
# with nothing from the source tree's build: the tools from PATH, the man pages, a host program
# built with pkg-config against libulp.so.0 and against libulp.a, guests linked with
# libpvas-guest.a, the module's source registered with DKMS. Runs alone too (FRESH_STEPS=debs):
# it installs the compiler and pkg-config a user of libulp-dev brings.
step() { echo "debs: $*"; }
trap 'echo "debs: FAILED at line $LINENO: $BASH_COMMAND"' ERR
apt-get update -qq
apt-get install -y -qq --no-install-recommends gcc libc6-dev pkg-config /debs/libulp0_*.deb \
	/debs/libulp-dev_*.deb /debs/ulp-tools_*.deb /debs/pvas-dkms_*.deb >/dev/null
dpkg-query -W libulp0 libulp-dev ulp-tools pvas-dkms
T=$(mktemp -d)
want=$(sha256sum /etc/os-release)
[ "$(command -v ulpexec)" = /usr/bin/ulpexec ]
[ "$(ulpexec -n 4 sha256sum /etc/os-release | sort -u)" = "$want" ]
[ "$(ulpspawn -n 6 -t 2 sha256sum /etc/os-release | grep -c "^${want%% *} ")" = 6 ]
step "ulpexec and ulpspawn from /usr/bin run sha256sum as ULPs"
ls /usr/share/man/man1/ulpexec.1.gz /usr/share/man/man1/ulpspawn.1.gz /usr/share/man/man3/pvas.3.gz \
	/usr/share/man/man3/ulp.3.gz >/dev/null
cp examples/paper/*_sample.c "$T/"
cd "$T"
for g in ulpexec_sample ulpprogram_sample; do
	cc -O2 -fPIE -static-pie -o $g $g.c -lpvas-guest
done
# shellcheck disable=SC2046
cc -O2 $(pkg-config --cflags libulp) -o ulpspawn_sample ulpspawn_sample.c $(pkg-config --libs libulp)
ldd ulpspawn_sample | grep -q 'libulp.so.0 => .*/x86_64-linux-gnu/libulp.so.0'
[ "$(./ulpspawn_sample)" = "$(printf 'I am user-level process 1.\nI am user-level process 2.')" ]
step "the paper's sample built with pkg-config runs on libulp.so.0"
# shellcheck disable=SC2046
cc -O2 $(pkg-config --cflags libulp) -o ulpspawn_sample ulpspawn_sample.c \
	-Wl,-Bstatic -lulp -Wl,-Bdynamic $(pkg-config --libs-only-other --static libulp) -lelf -lpthread
! ldd ulpspawn_sample | grep -q libulp
[ "$(./ulpspawn_sample)" = "$(printf 'I am user-level process 1.\nI am user-level process 2.')" ]
step "the same sample linked with libulp.a runs"
dkms status pvas | grep -q 'pvas/0.1.0'
step "dkms knows pvas/0.1.0: $(dkms status pvas)"
rm -rf "$T"
