# Sourced by the tools' run.sh: installs Debian's python3-torch when `import torch` fails (with
# sudo when not root; apt-get update only when the first install finds nothing).
ensure_python_torch() {
    if /usr/bin/python3 -c "import torch" 2>/dev/null; then
        return
    fi
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch; then
        $sudo apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-torch
    fi
}
