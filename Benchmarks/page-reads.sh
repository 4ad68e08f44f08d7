#!/bin/bash
# Not a test (PageReadTests is): how many times each page file is opened for reading in each build
# mode, cold --out, warm into a new --out, in place, in place after an edit, under strace.
#   bash Benchmarks/page-reads.sh BINARY TAG    (TAG names the run and its folder under /tmp/page-reads)
# shellcheck disable=SC2086  # the paths have no spaces; $C is split on purpose
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$1; T=$2; W=/tmp/page-reads/$T; rm -rf $W; mkdir -p $W/site/img $W/site/sub
cp $ROOT/Examples/images/hubble.jpg $W/site/img/a.jpg; cp $ROOT/Examples/images/coffee.png $W/site/img/b.png
python3 $ROOT/Tests/Support/origin.py --root $ROOT/Examples/images > $W/o.txt & OP=$!; sleep 0.5; P=$(awk '{print $2; exit}' $W/o.txt)
for n in 1 2 3; do printf '<html><body><img src="/img/a.jpg" alt="a"><img src="../img/b.png" alt="b"><img src="http://images.test/astronaut.jpg" alt="c"><div style="background-image:url(/img/b.png)"></div></body></html>\n' > $W/site/sub/p$n.html; done
printf -- '---\nimage: /img/a.jpg\n---\n![x](http://images.test/hubble-wide.jpg)\n' > $W/site/post.md
printf 'body { background: url(/img/a.jpg) }\n' > $W/site/style.css
C="--cache-dir $W/cache --connect-to images.test:80:127.0.0.1:$P --quiet"
count() { python3 - "$1" "$W/site" <<'PY'
import re,sys,collections
c=collections.Counter()
for l in open(sys.argv[1]):
    m=re.search(r'openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+)',l)
    if m and m.group(1).startswith(sys.argv[2]+"/") and "O_WRONLY" not in m.group(2) and "O_RDWR" not in m.group(2) and "O_DIRECTORY" not in m.group(2) and "-1 E" not in l:
        p=m.group(1)[len(sys.argv[2])+1:]
        if p.endswith((".html",".md",".css")): c[p]+=1
print(dict(sorted(c.items())))
PY
}
strace -f -qq -e trace=openat -o $W/1.log $B build $W/site --out $W/out1 $C; echo "$T cold --out: $(count $W/1.log)"
strace -f -qq -e trace=openat -o $W/2.log $B build $W/site --out $W/out2 $C; echo "$T warm new --out: $(count $W/2.log)"
strace -f -qq -e trace=openat -o $W/3.log $B build $W/site $C; echo "$T in place: $(count $W/3.log)"
sed -i 's/<body>/<body><p>edited<\/p>/' $W/site/sub/p1.html
strace -f -qq -e trace=openat -o $W/4.log $B build $W/site $C; echo "$T in place after an edit: $(count $W/4.log)"
kill $OP
