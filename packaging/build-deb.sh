#!/usr/bin/env bash
# Builds tagd_<version>_<arch>.deb, the plant IT install path (README "Installing"), from the same
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

mkdir -p "$stage/DEBIAN"
install -m 0755 "$root/packaging/deb/postinst" "$root/packaging/deb/prerm" \
  "$root/packaging/deb/postrm" "$stage/DEBIAN/"
installed_size="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: tagd
Version: $version
Architecture: $arch
Maintainer: tagd maintainers <tagd@localhost>
Installed-Size: $installed_size
Depends: nodejs (>= 20.19), systemd
Section: net
Priority: optional
Description: edge gateway daemon for plant-floor hardware
 tagd reads tags from Modbus, OPC UA and CAN equipment into a tag store, keeps history in
 SQLite or PostgreSQL, serves an authenticated REST API and pushes tag collections to webhook
 receivers. Runs as the hardened systemd service tagd.service under its own tagd user.
CONTROL

mkdir -p "$out"
deb="$out/tagd_${version}_${arch}.deb"
# gzip: every dpkg reads it, and it packs the ~180 MB tree in about 15 s here where xz takes
# almost two minutes (for a .deb about 60 % larger, ~29 MB).
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >&2
echo "$deb"
