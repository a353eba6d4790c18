#!/bin/sh
# Install the npm packages the tests need (NAME@VERSION each) when any is missing, globally:
# speedscope.sh finds them under `npm root -g`. Root runs npm; anyone else is told the command.
missing=""
for p in "$@"; do
    command -v npm >/dev/null && npm ls -g --depth=0 "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "proftop's tests need these npm packages:$missing" >&2
    command -v npm >/dev/null || echo "run: sudo apt-get install -y npm" >&2
    echo "run: sudo npm install -g$missing" >&2
    exit 1
fi
echo "installing (npm):$missing"
# Debian's nodejs comes without npm (its own package); NodeSource's has it and conflicts with it.
if ! command -v npm >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null 2>&1 ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm; } || exit 1
fi
npm install -g --no-audit --no-fund $missing
