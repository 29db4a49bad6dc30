# Shared by tools/serve and tools/test: installs the system packages Faultline needs, only when absent.
# Source it, then call `faultline_ensure_deps`.

FAULTLINE_APT_PACKAGES=(libsqlite3-dev zlib1g-dev libbrotli-dev libdw-dev elfutils)
# What the fast test stage uses besides (tools/test --fast): compilers and binutils to build real ELF fixtures,
# llvm-symbolizer (llvm) as the reference the symbolicator is compared with, lld-19 and llvm-19 to link Mach-O
# programs and make their dSYMs and universal files (ld64.lld, dsymutil-19, llvm-lipo-19), zip for Xcode archives.
FAULTLINE_TEST_APT_PACKAGES=(gcc g++ binutils llvm lld-19 llvm-19 zip)
# What only the end-to-end stage uses (tools/test --e2e): the real elfutils debuginfod client (debuginfod-find) to
# test the server's debuginfod face, chromium and chromium-driver to open the rendered dashboard headless, gdb for
# the crash corpus, openssl for the certificates the e-mail tests' SMTP server presents. PostgreSQL comes from
# tools/lib/postgres.sh, the PyPI clients from tools/lib/pypi.sh.
FAULTLINE_E2E_APT_PACKAGES=(debuginfod chromium chromium-driver gdb openssl)

faultline_missing_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

faultline_apt_install() {
  local missing
  missing=$(faultline_missing_packages "$@")
  [ -z "$missing" ] && return 0
  echo "==> installing system packages: $missing" >&2
  local sudo=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "error: missing packages ($missing) and not root; run: apt-get install $missing" >&2
      return 1
    fi
  fi
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
}

faultline_ensure_deps() {
  command -v swift >/dev/null 2>&1 || [ -x /opt/swift/usr/bin/swift ] || {
    echo "error: the Swift toolchain (6.1 or later) is not installed" >&2
    return 1
  }
  command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
  faultline_apt_install "${FAULTLINE_APT_PACKAGES[@]}"
}
