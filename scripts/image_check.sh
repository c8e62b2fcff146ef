#!/usr/bin/env bash
# Build the image here and check it from outside (docs/a2a.md, "The image"). Root, minutes; not in `make test`.
#
#   scripts/image_check.sh            (or: make image-check)
#
# 1. A Debian bookworm base (Python 3.11) made with debootstrap, imported as a local image (cached).
# 2. Our Dockerfile built on it with `buildah bud --isolation chroot --build-arg BASE=...`. pip in the
#    build reaches the package index exactly as the host's pip does: the host's pip config files, the
#    CA bundle and local index directories they name are mounted read-only for the build (never
#    copied into a layer, never written into the Dockerfile).
# 3. Run with `buildah run --isolation chroot` (podman's crun refuses this machine's cgroup layout):
#    the image's own ENTRYPOINT + CMD, in the host's network namespace, bound to 127.0.0.1 only.
# 4. Checks from outside: card within 30 s at the --card-url; an a2a-sdk 0.3 client sends
#    {participants, config} streaming: 3 dev tasks against the reference purple (TGC 100) and the
#    no-op purple (TGC 0), each purple in a second container of the same image, then the reference purple
#    in code mode (TGC 100) under the isolation `doctor` finds inside (bubblewrap, else the landlock
#    fallback: it must be one of them); SIGTERM stops the green within 10 s; the image size; no secret in
#    the layers (.env, keys).
# Figures are printed at the end and written to $WORK/figures.txt.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${IMAGE_CHECK_WORK:-/var/tmp/appworld-image-check}"
BASE_IMAGE="localhost/appworld-base:bookworm"
IMAGE="${IMAGE_CHECK_IMAGE:-localhost/appworld-green:check}"
GREEN_PORT="${GREEN_PORT:-19109}"
PURPLE_PORT="${PURPLE_PORT:-19119}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HOST_PY="$REPO/.venv/bin/python"
mkdir -p "$WORK"
FIG="$WORK/figures.txt"; : > "$FIG"
fig() { echo "$*" | tee -a "$FIG"; }
fail() { echo "IMAGE CHECK FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (debootstrap and buildah need it)"
for tool in buildah debootstrap jq; do
  command -v "$tool" >/dev/null || fail "$tool missing: apt-get install -y buildah debootstrap jq"
done

# ---- 1. the base image ----------------------------------------------------------------------------
if ! buildah inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  rootfs="$WORK/rootfs"
  if [ ! -x "$rootfs/usr/bin/python3" ]; then
    rm -rf "$rootfs"
    echo "== debootstrap bookworm (minbase + python3) into $rootfs"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
      bookworm "$rootfs" "$MIRROR" > "$WORK/debootstrap.log" 2>&1 || fail "debootstrap: see $WORK/debootstrap.log"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  fi
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  cp -a "$rootfs"/. "$mnt"/
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$ctr"
  buildah commit -q "$ctr" "$BASE_IMAGE" >/dev/null
  buildah rm "$ctr" >/dev/null
fi
probe=$(buildah from -q "$BASE_IMAGE")
fig "base image: $BASE_IMAGE ($(buildah run --isolation chroot "$probe" -- python3 --version 2>&1))"
buildah rm "$probe" >/dev/null

# ---- 2. build -------------------------------------------------------------------------------------
# The host's pip configuration, mounted read-only (same paths) for the build's RUN steps.
mounts=()
mount_ro() { [ -e "$1" ] && mounts+=(--volume "$1:$1:ro"); return 0; }
for f in /etc/pip.conf /etc/xdg/pip "$HOME/.config/pip" "$HOME/.pip"; do mount_ro "$f"; done
while read -r value; do
  for word in $value; do
    path="${word#file://}"; path="${path%/simple}"
    case "$path" in /*) mount_ro "$path" ;; esac
  done
done < <(pip config list 2>/dev/null | sed -n "s/^[^=]*\.\(cert\|find-links\|extra-index-url\|index-url\|constraint\)='\(.*\)'$/\2/p")
echo "== buildah bud ($(( ${#mounts[@]} / 2 )) host pip paths mounted read-only)"
start=$(date +%s)
if [ "${IMAGE_CHECK_REUSE:-0}" = 1 ] && buildah inspect --type image "$IMAGE" >/dev/null 2>&1; then
  echo "(IMAGE_CHECK_REUSE=1: the image already built is checked)"
else buildah bud --isolation chroot --layers=false --build-arg BASE="$BASE_IMAGE" "${mounts[@]}" \
  -t "$IMAGE" -f "$REPO/Dockerfile" "$REPO" > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "build: see $WORK/build.log"; }
fi
fig "build time: $(( $(date +%s) - start )) s"
layers=$(buildah inspect --type image "$IMAGE" | jq '.OCIv1.rootfs.diff_ids | length')
fig "image size: $(buildah images --format '{{.Size}}' "$IMAGE") ($layers layers; base $(buildah images --format '{{.Size}}' "$BASE_IMAGE"))"

# ---- 3. secrets in the layers ---------------------------------------------------------------------
scan=$(buildah from -q "$IMAGE"); smnt=$(buildah mount "$scan")
found=$(cd "$smnt/app" && find . -path ./.venv -prune -o -path ./.venv-appworld -prune -o \
  \( -name '.env' -o -name '*.pem' -o -name '*.key' -o -name 'id_rsa*' -o -name '.git' -o -name '.netrc' \) -print)
keyish=$(grep -rIlE 'sk-[A-Za-z0-9_-]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----' "$smnt/app" --exclude-dir=.venv \
  --exclude-dir=.venv-appworld --exclude-dir=.appworld 2>/dev/null || true)
[ -z "$keyish" ] || fail "key-looking content in the image: $keyish"
history_leak=$(buildah inspect --type image "$IMAGE" | jq -r '.Docker.history[]?.created_by // empty' | grep -ciE 'sk-[A-Za-z0-9]{8}|api_key=|password=' || true)
# The build's read-only mounts leave their mount points behind, empty: check that nothing of them is in the image.
for ((i = 1; i < ${#mounts[@]}; i += 2)); do
  target="${mounts[i]%%:*}"
  [ -e "$smnt$target" ] || continue
  case "$target" in /etc/ssl/*) continue ;; esac   # the image's own CA bundle (ca-certificates), not the host's
  if [ -d "$smnt$target" ]; then [ -z "$(ls -A "$smnt$target")" ] || fail "host content in the image: $target"
  else [ ! -s "$smnt$target" ] || fail "host content in the image: $target"; fi
done
buildah umount "$scan" >/dev/null; buildah rm "$scan" >/dev/null
[ -z "$found" ] || fail "secret-looking files in the image: $found"
[ "$history_leak" = 0 ] || fail "a secret-looking string in the image history"
fig "secrets: none (.env, *.pem, *.key, id_rsa*, .git, .netrc, sk-... or PEM private keys under /app; host pip config; history)"

# ---- 4. run ---------------------------------------------------------------------------------------
entry=$(buildah inspect --type image "$IMAGE" | jq -r '(.OCIv1.config.Entrypoint // []) | join(" ")')
pids=(); ctrs=()
cleanup() {  # only what this script started: its buildah run processes and its containers
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 1; for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for c in "${ctrs[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
run_image() {  # run_image LOG ARGV...: the image's command in its own container, in the background
  local log=$1; shift
  local c; c=$(buildah from -q "$IMAGE"); last_ctr=$c; ctrs+=("$c")
  buildah run --isolation chroot "$c" -- "$@" > "$log" 2>&1 &
  pids+=($!)
}
card_within() {  # card_within URL SECONDS -> prints seconds taken
  "$HOST_PY" - "$1" "$2" <<'PY'
import sys, time, requests
url, limit = sys.argv[1], float(sys.argv[2]); t0 = time.monotonic()
while time.monotonic() - t0 < limit:
    try:
        r = requests.get(url.rstrip("/") + "/.well-known/agent-card.json", timeout=2)
        if r.ok and r.json()["url"] == url: print(f"{time.monotonic() - t0:.1f}"); sys.exit(0)
    except Exception: pass
    time.sleep(0.2)
sys.exit(1)
PY
}
green_url="http://127.0.0.1:$GREEN_PORT/"
run_image "$WORK/green.log" $entry --host 127.0.0.1 --port "$GREEN_PORT" --card-url "$green_url"
green_pid=${pids[-1]}
green_ctr=$last_ctr
t=$(card_within "$green_url" 30) || { tail -20 "$WORK/green.log"; fail "no card at $green_url within 30 s"; }
fig "green card: ${t} s after buildah run"

assess() {  # assess KIND EXPECTED_TGC [INTERACTION]
  local kind=$1 want=$2 interaction=${3:-tools} purl="http://127.0.0.1:$PURPLE_PORT/"
  run_image "$WORK/purple-$kind.log" /app/.venv/bin/appworld-green purple --kind "$kind" --host 127.0.0.1 --port "$PURPLE_PORT"
  local ppid=${pids[-1]}
  card_within "$purl" 60 >/dev/null || { tail -20 "$WORK/purple-$kind.log"; fail "purple $kind: no card"; }
  cat > "$WORK/scenario-$kind.toml" <<TOML
[green_agent]
endpoint = "$green_url"
[[participants]]
role = "agent"
endpoint = "$purl"
[config]
split = "dev"
num_tasks = 3
workers = 2
interaction = "$interaction"
TOML
  local s; s=$(date +%s)
  (cd "$WORK" && PYTHONPATH="$REPO/scenarios/appworld" RUNS_DIR="$WORK/host-runs" "$REPO/.venv/bin/appworld-green" assess \
     "scenario-$kind.toml" --out "$WORK/results-$kind.json") > "$WORK/assess-$kind.log" 2>&1 \
     || { tail -20 "$WORK/assess-$kind.log"; fail "assessment against $kind did not complete"; }
  local tgc; tgc=$(jq '.results[0].tgc' "$WORK/results-$kind.json")
  [ "$(jq '.results[0].max_score' "$WORK/results-$kind.json")" = 3 ] || fail "$kind: not 3 tasks"
  awk -v a="$tgc" -v b="$want" 'BEGIN{exit !(a+0 == b+0)}' || fail "$kind: TGC $tgc, expected $want"
  fig "assessment vs $kind purple ($interaction mode, 3 dev tasks, streaming, a2a-sdk 0.3 client): TGC $tgc in $(( $(date +%s) - s )) s"
  kill -TERM "$ppid"; wait "$ppid" 2>/dev/null || true
}
assess reference 100
assess noop 0

# code mode's isolation inside the image, as `doctor` (the same probe a battle makes) finds it
dc=$(buildah from -q "$IMAGE"); ctrs+=("$dc")
buildah run --isolation chroot "$dc" -- /app/.venv/bin/appworld-green doctor --interaction code --json \
  > "$WORK/doctor-code.json" 2> "$WORK/doctor-code.log" || true
mechanism=$(jq -r '.isolation_mechanism' "$WORK/doctor-code.json" 2>/dev/null || echo "?")
case "$mechanism" in bubblewrap|landlock) ;; *) fail "code mode has no sandbox in the image: $(head -c 400 "$WORK/doctor-code.json")";; esac
fig "code mode's isolation in the container: $(jq -r '.isolation' "$WORK/doctor-code.json")"
assess reference 100 code

s=$(date +%s%N)
kill -TERM "$green_pid"
for _ in $(seq 100); do kill -0 "$green_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$green_pid" 2>/dev/null && fail "the green did not stop within 10 s of SIGTERM"
ms=$(( ($(date +%s%N) - s) / 1000000 ))
gmnt=$(buildah mount "$green_ctr")
left=0
for _ in $(seq 50); do  # the green's own children (AppWorld servers, bridge) must be gone too
  left=$(for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" != "$gmnt" ] || echo "$p"; done | wc -l)
  [ "$left" = 0 ] && break; sleep 0.2
done
[ "$left" = 0 ] || fail "$left process(es) of the green's container still running after SIGTERM"
(exec 3<>"/dev/tcp/127.0.0.1/$GREEN_PORT") 2>/dev/null && fail "port $GREEN_PORT still answers after SIGTERM"
fig "SIGTERM -> green (buildah run) exited in $ms ms; no process left in its container; port closed"

# bubblewrap (code mode's sandbox) inside the image, as the image's user (root), no extra privileges.
bw=$(buildah from -q "$IMAGE"); ctrs+=("$bw")
if buildah run --isolation chroot "$bw" -- bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent \
     /bin/true > "$WORK/bwrap.log" 2>&1; then fig "bubblewrap in the container (root, --unshare-all): works"
else fig "bubblewrap in the container (root, --unshare-all): FAILS here: $(head -c 200 "$WORK/bwrap.log")"
  [ "$mechanism" = landlock ] || fail "bubblewrap fails in the container, yet code mode's isolation is $mechanism, not landlock"
fi
echo "IMAGE CHECK PASSED (figures: $FIG)"
