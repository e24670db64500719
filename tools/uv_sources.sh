# Sourced by tools/lock.sh and tools/install.sh: where uv looks for the locked files. uv does
# not read pip's configuration, so the sources are named here, once, for both:
#  - the index: PyPI (UV_INDEX_URL overrides it, e.g. with a mirror that serves the same files);
#  - a find-links location for the one file PyPI does not serve, torch 2.13.0+cpu: SB_FIND_LINKS
#    (space-separated folders or URLs) if set, else pip's configured find-links (this machine's
#    and CI's: /opt/wheels), else PyTorch's own CPU wheel page.
# Which source serves a file never changes what is installed: every file is checked against the
# lock's sha256 hashes, and one that differs fails the install.
sb_uv_sources() {
  local links=${SB_FIND_LINKS:-}
  if [ -z "$links" ]; then
    links=$({ python3 -m pip config get global.find-links || python3 -m pip config get :env:.find-links; } 2>/dev/null || true)
    [ -n "$links" ] || links=${PIP_FIND_LINKS:-https://download.pytorch.org/whl/cpu/torch/}
  fi
  UV_SOURCES=(--index-url "${UV_INDEX_URL:-https://pypi.org/simple}")
  local l
  for l in $links; do
    case $l in
      http://*|https://*|file://*) UV_SOURCES+=(--find-links "$l") ;;
      *) [ -d "$l" ] && UV_SOURCES+=(--find-links "$l") ;;
    esac
  done
}
