#!/bin/sh
# Build ns-2.35 with the CoDel and PIE code the rural-broadband paper ran, installed as
# a separate binary (default /usr/local/bin/ns-aqm; Debian's /usr/bin/ns is not touched).
# OPTIONAL: nothing in `make test` or the study needs it; it lets the study's ns-2
# reconstruction (cell.tcl with qkind CoDel / PIE) run in the paper's own simulator.
#
#   build-ns2-aqm.sh HBATMIT_GIT PIE_DIR [BUILD_DIR] [DEST]
#
# HBATMIT_GIT  a clone of https://github.com/hbatmit/ns2.35 (its .git directory or work
#              tree). CoDel is Kathleen Nichols's ns-2 code (BSD / GPLv2 dual licence):
#              queue/codel.h as in commit 482701a ("Patch code with CoDel patch from
#              http://www.pollere.net/CoDel-ns-2.35.patch", the class derives from ns-2's
#              Queue), queue/codel.cc as in commit 4f9d79f ("Latest version of codel
#              from http://www.pollere.net/Txtdocs/codel.cc, confirmed by CableLabs" —
#              aqmlab's `variant = "ns2"`) with that repository's own two additions for
#              its LinkAwareQueue undone (`LinkAwareQueue::command` -> `Queue::command`,
#              the `get_link_rates` stub removed), which is pollere's file again.
#              Tcl defaults as the patch adds them (482701a tcl/lib/ns-default.tcl:251-254).
# PIE_DIR      a directory holding pie.cc and pie.h, the PIE authors' ns-2 code
#              ("Copyright (c) 2013-2014, Cisco Systems, Inc., Portions Copyright (c)
#              2013-2014 Cable Television Laboratories", Natarajan, Pan, Piglione, White,
#              Hayakawa; 3-clause BSD-style licence), as found in public ns-2 trees.
#              pie.cc includes "docsislink.h" (CableLabs' DOCSIS link, not public with
#              it); DOCSIS mode is only entered when `$pie link` is given a DocsisLink,
#              which no script here does, so a stub header declaring the class is
#              written instead. Tcl defaults: the values the PIE authors' study scripts
#              set (docs/qdiscs/pie.md, "The ns-2 PIE code").
# BUILD_DIR    default /var/tmp/ns2-aqm-build; DEST default /usr/local/bin/ns-aqm.
#
# The ns-2.35 sources come from Debian (`apt-get source ns2`, needs a deb-src line; the
# build dependencies from `apt-get build-dep ns2`). Debian's patches are applied
# when the mirror serves its packaging tarball (untested: this machine's mirror did not);
# either way the upstream tarball (ns2_2.35+dfsg.orig.tar.xz)
# is built with ns-2's own configure against Debian's tcl/tk 8.6, otcl 1.14, tclcl 1.20
# with -fpermissive and -DUSE_INTERP_RESULT (ns-2.35 predates g++ 12 and Tcl 8.6).
# Idempotent: every step is skipped when its result exists; re-running rebuilds only
# what changed.
set -eu

[ $# -ge 2 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
HB=$1
PIE=$2
BUILD=${3:-/var/tmp/ns2-aqm-build}
DEST=${4:-/usr/local/bin/ns-aqm}

die() { echo "build-ns2-aqm: $*" >&2; exit 1; }
[ -f "$PIE/pie.cc" ] && [ -f "$PIE/pie.h" ] || die "$PIE: expected pie.cc and pie.h (the PIE authors' ns-2 code)"
git --git-dir="$HB" rev-parse -q --verify 4f9d79f^{commit} >/dev/null 2>&1 \
    || git -C "$HB" rev-parse -q --verify 4f9d79f^{commit} >/dev/null 2>&1 \
    || die "$HB: expected a clone of github.com/hbatmit/ns2.35 holding commits 482701a and 4f9d79f"
hbgit() { git --git-dir="$HB" "$@" 2>/dev/null || git -C "$HB" "$@"; }
for c in apt-get g++ make tar; do command -v $c >/dev/null || die "$c is not installed"; done

mkdir -p "$BUILD"
cd "$BUILD"

# 1. Debian's ns2 source and build dependencies.
if ! ls ns2_2.35*.orig.tar.xz >/dev/null 2>&1; then
    apt-get build-dep -y ns2 || die "apt-get build-dep ns2 failed (is a deb-src line for Debian enabled?)"
    apt-get source --download-only ns2 || ls ns2_2.35*.orig.tar.xz >/dev/null 2>&1 \
        || die "apt-get source ns2 failed"
fi
SRC=$BUILD/ns-2.35
if [ ! -f "$SRC/configure" ]; then
    tar xf ns2_2.35*.orig.tar.xz
    if ls ns2_2.35*.debian.tar.xz >/dev/null 2>&1; then
        tar -C "$SRC" -xf ns2_2.35*.debian.tar.xz
        if [ -f "$SRC/debian/patches/series" ]; then
            while read -r p; do
                case $p in ''|\#*) continue ;; esac
                patch -d "$SRC" -p1 -N < "$SRC/debian/patches/$p" || die "debian patch $p failed"
            done < "$SRC/debian/patches/series"
        fi
    fi
fi

# 2. The AQM sources.
hbgit show 482701a:queue/codel.h > "$SRC/queue/codel.h"
hbgit show 4f9d79f:queue/codel.cc \
    | sed -e 's/LinkAwareQueue::command/Queue::command/' \
          -e '/^std::map<uint64_t,double> CoDelQueue::get_link_rates/,/^}/d' > "$SRC/queue/codel.cc"
cp "$PIE/pie.cc" "$PIE/pie.h" "$SRC/queue/"
cat > "$SRC/queue/docsislink.h" <<'EOF'
/* Stub written by aqmlab's build-ns2-aqm.sh: pie.cc's DOCSIS mode needs CableLabs'
 * DocsisLink, which is not built here; DOCSIS mode is entered only for a link of
 * that class, so expectedDelay() is never called. */
#ifndef ns_docsislink_stub_h
#define ns_docsislink_stub_h
#include <stdlib.h>
#include "delay.h"
class DocsisLink : public LinkDelay {
public:
	double expectedDelay(int) { abort(); return 0; }
};
#endif
EOF

# 3. Makefile object list and Tcl defaults (each added once).
grep -q 'queue/codel.o' "$SRC/Makefile.in" \
    || sed -i 's#queue/red.o \\#queue/red.o queue/codel.o queue/pie.o \\#' "$SRC/Makefile.in"
grep -q 'queue/codel.o' "$SRC/Makefile.in" || die "Makefile.in: queue/red.o not found"
if ! grep -q '^Queue/CoDel set target_' "$SRC/tcl/lib/ns-default.tcl"; then
    cat >> "$SRC/tcl/lib/ns-default.tcl" <<'EOF'

# Added by aqmlab build-ns2-aqm.sh: CoDel as pollere's CoDel-ns-2.35.patch sets it.
Queue/CoDel set curq_ 0.0
Queue/CoDel set d_exp_ 0.0
Queue/CoDel set interval_ 0.1
Queue/CoDel set target_ .005
# PIE as the PIE authors' scripts set it.
Queue/PIE set a_ 0.125
Queue/PIE set b_ 1.25
Queue/PIE set tUpdate_ 0.03
Queue/PIE set sUpdate_ 0
Queue/PIE set qdelay_ref_ 0.02
Queue/PIE set mean_pktsize_ 1000
Queue/PIE set burst_allowance_ 0.1
Queue/PIE set prob_ 0
Queue/PIE set curq_ 0
Queue/PIE set dq_threshold_ 10000
Queue/PIE set bytes_ true
Queue/PIE set setbit_ false
Queue/PIE set mark_p_ 0.1
Queue/PIE set use_mark_p_ true
EOF
fi

# 4. Configure against Debian's tcl/tk/otcl/tclcl (ns-2's configure looks in ../lib,
#    ../otcl and ../tclcl beside the tree for the libraries under the names it expects).
L=/usr/lib/$(gcc -print-multiarch)
mkdir -p lib otcl tclcl
for f in libtcl8.6.so libtk8.6.so; do ln -sf "$L/$f" "lib/$f"; done
ln -sf "$L/libotcl.so" otcl/libotcl1.14.so
ln -sf /usr/include/otcl.h otcl/otcl.h
ln -sf "$L/libtclcl.so" tclcl/libtclcl1.20.so
for h in /usr/include/tclcl/*.h; do ln -sf "$h" tclcl/; done
ln -sf "$(command -v tcl2c++)" tclcl/tcl2c++
cd "$SRC"
if [ ! -f Makefile ] || [ Makefile.in -nt Makefile ]; then
    ./configure --with-tcl-ver=8.6 --with-tk-ver=8.6 > configure.log 2>&1 \
        || { tail -20 configure.log >&2; die "configure failed (configure.log)"; }
fi
# Debian's libtclcl is built without HAVE_INT64 (it exports no TclObject::bind for
# int64_t): build ns-2 the same way, or the link fails (queue-monitor's byte counters
# are then 32-bit ints, as in Debian's /usr/bin/ns).
if grep -q '^#define HAVE_INT64 1' autoconf.h && ! nm -DC "$L/libtclcl.so" | grep -q 'bind(char const\*, long\*)'; then
    sed -i 's|^#define HAVE_INT64 1|/* #undef HAVE_INT64: Debian libtclcl has no int64 bind */|' autoconf.h
    make clean > /dev/null 2>&1 || true
fi
# ... and then the one unconditional int64 bind (PackMime's open-loop source, which the
# study does not use) must bind an int.
grep -q 'HAVE_INT64 1' autoconf.h || sed -i 's/^\(\s*\)int64_t maxpkts_;/\1int maxpkts_;/' packmime/packmime_OL.h
# ns_tcl.cc embeds tcl/lib/*.tcl: rebuild it when ns-default.tcl changed.
[ ! -f gen/ns_tcl.cc ] || [ tcl/lib/ns-default.tcl -ot gen/ns_tcl.cc ] || rm -f gen/ns_tcl.cc
make -j"${JOBS:-2}" CCOPT="-O2 -fpermissive -Wno-narrowing -std=gnu++98 -DUSE_INTERP_RESULT" ns > make.log 2>&1 \
    || { tail -30 make.log >&2; die "make failed (make.log)"; }
install -m 0755 ns "$DEST"
echo 'set ns [new Simulator]; if {![catch {new Queue/CoDel; new Queue/PIE}]} {puts ok}' | "$DEST" \
    | grep -q '^ok$' || die "$DEST does not create Queue/CoDel and Queue/PIE"
echo "build-ns2-aqm: installed $DEST"
