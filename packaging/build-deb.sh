#!/usr/bin/env bash
# Builds tagd_<version>_<arch>.deb, the plant IT install path (docs/installing.md), from the same
# files `npm pack` ships. Run from anywhere: `npm run package:deb`, or
#   packaging/build-deb.sh [--tarball tagd-<version>.tgz] [--out DIR]
# --tarball reuses a packed tarball (default: pack one now, which builds dist/ in full);
# --out is where the .deb goes (default: the current folder). Prints the .deb's path last.
#
# The architecture is the build machine's (dpkg --print-architecture), not "all": the
# production dependencies include native addons (better-sqlite3; serialport and socketcan when
# they build), so build on the target's architecture. Dependencies are installed with `npm ci
# --omit=dev` from the repository's package-lock.json, so the .deb holds the tested versions.
# Needs: node and npm (20.19+), dpkg-deb, the npm registry, and a C++ toolchain with python3
# for addons npm cannot fetch prebuilt.
#
# Layout of the package:
#   /usr/lib/tagd/                       package.json, dist/, config/, systemd/, node_modules/
#   /usr/bin/tagd                        -> ../lib/tagd/dist/src/bin.js
#   /lib/systemd/system/tagd.service     the unit (ExecStart=/usr/bin/tagd start …)
#   /usr/lib/sysusers.d/tagd.conf        the tagd user, in dialout
#   /usr/lib/tmpfiles.d/tagd.conf        /etc/tagd, tagd:tagd 0750
#   /usr/share/doc/tagd/copyright        DEP-5: tagd's licence (UNLICENSED, proprietary) and
#                                        each bundled node module's (packaging/deb-copyright.mjs)
#   /usr/share/doc/tagd/changelog.Debian.gz
#   /usr/share/doc/tagd/README.md, docs/ the documentation npm pack ships, moved out of the app to
#                                        where Debian keeps it (its links are relative: they hold)
#   DEBIAN/md5sums                       every shipped file, what `dpkg --verify` checks
#
# File dates: npm pack and the registry's tarballs date every file 1985-10-26 (npm's fixed
# date), so every file, folder and link of the package is dated to the build: the time of the
# build, or SOURCE_DATE_EPOCH when it is set (the reproducible-builds convention; dpkg-deb
# also dates the archive's members from it). The changelog entry carries the same date.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tarball=""
out="$PWD"
while [ $# -gt 0 ]; do
  case "$1" in
    --tarball) tarball="$(realpath "$2")"; shift 2 ;;
    --out) out="$(realpath "$2")"; shift 2 ;;
    *) echo "usage: $0 [--tarball FILE] [--out DIR]" >&2; exit 2 ;;
  esac
done

version="$(node -p "require(process.argv[1]).version" "$root/package.json")"
arch="$(dpkg --print-architecture)"
case "${SOURCE_DATE_EPOCH:-}" in
  '') build_date="$(date +%s)" ;;
  *[!0-9]*) echo "SOURCE_DATE_EPOCH must be seconds since 1970: $SOURCE_DATE_EPOCH" >&2; exit 2 ;;
  *) build_date="$SOURCE_DATE_EPOCH" ;;
esac
maintainer="tagd maintainers <tagd@localhost>"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ -z "$tarball" ]; then
  (cd "$root" && npm pack --pack-destination "$work" >&2)
  tarball="$work/tagd-$version.tgz"
fi

stage="$work/stage"
app="$stage/usr/lib/tagd"
mkdir -p "$app"
# npm pack puts everything under package/.
tar -xzf "$tarball" -C "$app" --strip-components=1 --no-same-owner
cp "$root/package-lock.json" "$app/"
(cd "$app" && npm ci --omit=dev --no-audit --no-fund >&2)
# The executable: npm install -g sets the mode of package.json "bin" itself; here we do.
chmod 0755 "$app/dist/src/bin.js"

mkdir -p "$stage/usr/bin"
ln -s ../lib/tagd/dist/src/bin.js "$stage/usr/bin/tagd"
install -D -m 0644 "$app/systemd/tagd.service" "$stage/lib/systemd/system/tagd.service"
install -D -m 0644 "$app/systemd/tagd.sysusers" "$stage/usr/lib/sysusers.d/tagd.conf"
install -D -m 0644 "$app/systemd/tagd.tmpfiles" "$stage/usr/lib/tmpfiles.d/tagd.conf"

doc="$stage/usr/share/doc/tagd"
install -d -m 0755 "$doc"
mv "$app/README.md" "$app/docs" "$doc/"
node "$root/packaging/deb-copyright.mjs" "$app" usr/lib/tagd > "$doc/copyright"
# The source's commit, when built from a git checkout: which code this version is.
commit="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || true)"
{
  echo "tagd ($version) unstable; urgency=medium"
  echo
  echo "  * tagd $version${commit:+, built from commit $commit}."
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$build_date")"
} | gzip -9n > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.Debian.gz"

mkdir -p "$stage/DEBIAN"
install -m 0755 "$root/packaging/deb/postinst" "$root/packaging/deb/prerm" \
  "$root/packaging/deb/postrm" "$stage/DEBIAN/"
installed_size="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: tagd
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: nodejs (>= 20.19), systemd
Section: net
Priority: optional
Description: edge gateway daemon for plant-floor hardware
 tagd reads tags from Modbus, OPC UA and CAN equipment into a tag store, keeps history in
 SQLite or PostgreSQL, serves an authenticated REST API and pushes tag collections to webhook
 receivers. Runs as the hardened systemd service tagd.service under its own tagd user.
CONTROL

# md5sums: "<md5>  <path without the leading />" for every regular file outside DEBIAN/, the
# list dpkg installs and `dpkg --verify` checks. A name with a newline cannot be listed: refuse.
# (md5sum -z: names unescaped, as dpkg reads them.)
if [ -n "$(find "$stage" -name $'*\n*' -print -quit)" ]; then
  echo "a file name in the package holds a newline" >&2
  exit 1
fi
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z \
  | xargs -0 -r md5sum -z -- | tr '\0' '\n') > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
find "$stage" -exec touch -h -d "@$build_date" {} +

mkdir -p "$out"
deb="$out/tagd_${version}_${arch}.deb"
# gzip: every dpkg reads it, and it packs the ~180 MB tree in about 15 s here where xz takes
# almost two minutes (for a .deb about 60 % larger, ~29 MB).
SOURCE_DATE_EPOCH="$build_date" dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >&2
echo "$deb"
