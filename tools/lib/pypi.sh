# Sourced by tools/test (after deps.sh): the test tools that come from PyPI, each installed with pip only when the
# pinned version is absent.
#   faultline_ensure_sentry_cli    sentry-cli 3.8.2 (a Rust binary shipped in a wheel)
#   faultline_ensure_sentry_sdk    the Python sentry-sdk 2.75.0, and brotli (whose presence makes it compress with br)
#   faultline_ensure_aiosmtpd      aiosmtpd 1.4.6 (the SMTP server the e-mail tests run: Tests/…/Python/smtp_sink.py)
#   faultline_ensure_authlib       authlib 1.9.10 (signs the tokens of the single sign-on tests' OpenID provider:
#                                  Tests/FaultlineHTTPTests/Python/oidc_provider.py)
#   faultline_ensure_selenium      selenium 4.51.0 (drives chromium through chromium-driver: tools/a11y/check_pages.py)
#   faultline_ensure_axe           axe-core 4.10's axe.min.js from the axe-selenium-python 3.0.0 wheel, kept at
#                                  $FAULTLINE_AXE_JS (default ~/.cache/faultline/axe-core/axe.min.js), which it exports

faultline_pip_install() {
  python3 -m pip --version >/dev/null 2>&1 || faultline_apt_install python3-pip
  # Debian's own python3 refuses pip installs without --break-system-packages (PEP 668).
  python3 -m pip install --quiet "$@" >&2 2>/dev/null || python3 -m pip install --quiet --break-system-packages "$@" >&2
}

faultline_ensure_sentry_cli() {
  if [ "$(sentry-cli --version 2>/dev/null)" != "sentry-cli 3.8.2" ]; then
    echo "==> installing sentry-cli 3.8.2 (pip)" >&2
    faultline_pip_install 'sentry-cli==3.8.2'
  fi
}

faultline_ensure_sentry_sdk() {
  if ! python3 -c 'import sentry_sdk, brotli, sys; sys.exit(sentry_sdk.VERSION != "2.75.0")' 2>/dev/null; then
    echo "==> installing sentry-sdk 2.75.0 and brotli (pip)" >&2
    faultline_pip_install 'sentry-sdk==2.75.0' 'brotli'
  fi
}

faultline_ensure_aiosmtpd() {
  if ! python3 -c 'import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != "1.4.6")' 2>/dev/null; then
    echo "==> installing aiosmtpd 1.4.6 (pip)" >&2
    faultline_pip_install 'aiosmtpd==1.4.6'
  fi
}

faultline_ensure_authlib() {
  if ! python3 -c 'import authlib, sys; sys.exit(authlib.__version__ != "1.9.10")' 2>/dev/null; then
    echo "==> installing authlib 1.9.10 (pip)" >&2
    faultline_pip_install 'authlib==1.9.10'
  fi
}

faultline_ensure_selenium() {
  if ! python3 -c 'import selenium, sys; sys.exit(selenium.__version__ != "4.51.0")' 2>/dev/null; then
    echo "==> installing selenium 4.51.0 (pip)" >&2
    faultline_pip_install 'selenium==4.51.0'
  fi
}

faultline_ensure_axe() {
  export FAULTLINE_AXE_JS="${FAULTLINE_AXE_JS:-$HOME/.cache/faultline/axe-core/axe.min.js}"
  [ -s "$FAULTLINE_AXE_JS" ] && return 0
  echo "==> fetching axe-core (the axe-selenium-python 3.0.0 wheel, pip)" >&2
  local axe_tmp
  axe_tmp="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --python-version 3.12 --only-binary=:all: 'axe-selenium-python==3.0.0' -d "$axe_tmp" >&2
  mkdir -p "$(dirname "$FAULTLINE_AXE_JS")"
  python3 -c 'import sys, zipfile, glob; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0]); open(sys.argv[2], "wb").write(z.read("axe_selenium_python/node_modules/axe-core/axe.min.js"))' "$axe_tmp" "$FAULTLINE_AXE_JS"
  rm -rf "$axe_tmp"
}
