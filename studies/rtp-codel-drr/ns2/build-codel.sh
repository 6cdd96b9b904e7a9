#!/usr/bin/env bash
# Build Nichols's ns-2 CoDel (queue/codel.cc, the 2013 version pollere.net distributed)
# as codel.so next to this script, for Debian's ns-2.35 (/usr/bin/ns, which exports its
# symbols). drr.tcl then preloads it into its ns runs and adds the CoDel half of the
# report's tables (Queue/CoDel) to its output; without codel.so it runs the DRR half only.
#
#   build-codel.sh GITDIR
#
# GITDIR: a clone of github.com/hbatmit/ns2.35 (a git directory or a work tree). From it:
#   f95482f  "Initial commit of ns-2.35 excluding gz files" -- the ns-2.35 headers;
#   482701a  pollere.net's CoDel-ns-2.35.patch -- queue/codel.h (CoDelQueue : Queue);
#   4f9d79f  "Latest version of codel from http://www.pollere.net/Txtdocs/codel.cc" --
#            queue/codel.cc, the code aqmlab's `variant = "ns2"` follows
#            (docs/qdiscs/codel.md). That commit's file already carries two lines of
#            the repository's own later work (LinkAwareQueue::command, get_link_rates);
#            they are reverted to plain ns-2 (Queue::command, no get_link_rates) below.
# Needs g++ and the Debian packages tcl8.6-dev, libotcl1-dev, libtclcl1-dev.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:?usage: build-codel.sh GITDIR (a clone of hbatmit/ns2.35)}"
git="git -C $src"
$git cat-file -e 4f9d79f:queue/codel.cc
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# the ns-2.35 headers (every .h of the initial commit)
$git ls-tree -r --name-only f95482f | grep '\.h$' | while read -r f; do
    mkdir -p "$(dirname "$f")"
    $git show "f95482f:$f" > "$f"
done
$git show f95482f:autoconf.h.in > autoconf.h.in
# autoconf.h as ns-2.35's configure writes it on a 64-bit glibc system
sed -e 's/^#undef \(HAVE_INT64\|HAVE_SOCKLEN_T\|HAVE_BCOPY\|HAVE_BZERO\|HAVE_GETRUSAGE\|HAVE_SNPRINTF\|HAVE_STRTOLL\|STDC_HEADERS\|HAVE_STRING_H\|HAVE_STRINGS_H\|HAVE_ARPA_INET_H\|HAVE_NETINET_IN_H\|HAVE_STL\|HAVE_FENV_H\)$/#define \1 1/' \
    autoconf.h.in > autoconf.h
$git show 482701a:queue/codel.h > queue/codel.h
$git show 4f9d79f:queue/codel.cc \
    | sed -e 's/LinkAwareQueue::command/Queue::command/' -e '/get_link_rates/,$d' > queue/codel.cc
inc=""
for d in . common queue trace classifier adc apps mac mobile tcp routing mcast link tools; do inc="$inc -I$d"; done
g++ -O2 -fPIC -shared -w -DUSE_INTERP_RESULT -DHAVE_CONFIG_H -DNO_TK -DNDEBUG -DTCP_DELAY_BIND_ALL \
    -DCPP_NAMESPACE=std $inc -I/usr/include/tcl8.6 -I/usr/include/tclcl \
    queue/codel.cc -o "$here/codel.so"
echo "built $here/codel.so"
