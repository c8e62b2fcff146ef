# The AppWorld Green for today's AgentBeats platform (docs/a2a.md). linux/amd64; the offline world is
# built into the image, so a container answers its agent card at once and needs no download at run time.
#   docker build --platform linux/amd64 -t ghcr.io/<you>/appworld-green:latest .
#   docker run -p 9009:9009 ghcr.io/<you>/appworld-green:latest --host 0.0.0.0 --port 9009 --card-url http://HOST:9009/
# The same image serves our baseline purples (leaderboard/purple-agent.json5):
#   docker run --entrypoint /app/.venv/bin/appworld-green IMAGE purple --kind reference --host 0.0.0.0 --port 9009
# BASE: any Debian bookworm with Python 3.11 and venv (scripts/image_check.sh builds one with debootstrap).
ARG BASE=python:3.11-slim-bookworm
FROM --platform=linux/amd64 ${BASE}

# bubblewrap: code mode's sandbox where the container may make namespaces; libseccomp2: its landlock fallback's
# seccomp filter where it may not (Docker's default profile). The Green runs as root in the container, which the
# fallback needs to give each battle a uid of its own (docs/security.md, "Code mode's sandbox").
RUN apt-get update && apt-get install -y --no-install-recommends make git bubblewrap libseccomp2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . /app
# The two virtualenvs and the offline world (`make world`; not the test-only .venv-a2a1), then drop the caches.
# The world and the runs are root's alone: the landlock fallback's uids cannot even look up a path in them (Landlock
# refuses opening, not lookup); /app stays passable, so they can run the AppWorld virtualenv.
RUN make world PYTHON=python3 && rm -rf /root/.cache && mkdir -p /app/runs && chmod 0711 /app \
    && chmod 0700 /app/.appworld /app/runs
# Every run's provenance names the image: build with --build-arg IMAGE_DIGEST=<the registry digest or git revision>.
ARG IMAGE_DIGEST=unlabelled
ENV APPWORLD_ROOT=/app/.appworld RUNS_DIR=/app/runs PYTHONUNBUFFERED=1 APPWORLD_GREEN_IMAGE_DIGEST=image:${IMAGE_DIGEST}
EXPOSE 9009
ENTRYPOINT ["/app/.venv/bin/appworld-green", "serve"]
CMD ["--host", "0.0.0.0", "--port", "9009"]
