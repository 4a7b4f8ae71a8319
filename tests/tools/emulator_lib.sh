# shellcheck shell=bash
# Start and stop the NAC API emulator (tests/emulator/nac_emulator.py) in the
# background. Source this file from bash; it defines:
#
#   emulator_start PYTHON EMULATOR_SCRIPT [EMULATOR_ARGS...]
#       Starts the emulator on 127.0.0.1 with --port 0 --port-file, waits until
#       it listens, and sets EMULATOR_PID, EMULATOR_PORT, EMULATOR_URL and
#       EMULATOR_LOG. Installs an EXIT/INT/TERM trap that calls emulator_stop.
#   emulator_stop
#       Stops the emulator (TERM, then KILL after 5 s) and removes its
#       temporary files. Safe to call more than once.

EMULATOR_PID=""
EMULATOR_PORT=""
EMULATOR_URL=""
EMULATOR_LOG=""
EMULATOR_TMP=""
EMULATOR_START_TIMEOUT="${EMULATOR_START_TIMEOUT:-30}"

emulator_stop() {
    if [[ -n "${EMULATOR_PID}" ]]; then
        if kill -0 "${EMULATOR_PID}" 2>/dev/null; then
            kill -TERM "${EMULATOR_PID}" 2>/dev/null || true
            local waited=0
            while kill -0 "${EMULATOR_PID}" 2>/dev/null && (( waited < 50 )); do
                sleep 0.1
                waited=$(( waited + 1 ))
            done
            if kill -0 "${EMULATOR_PID}" 2>/dev/null; then
                echo "emulator (pid ${EMULATOR_PID}) ignored SIGTERM, killing it" >&2
                kill -KILL "${EMULATOR_PID}" 2>/dev/null || true
            fi
        fi
        wait "${EMULATOR_PID}" 2>/dev/null || true
        EMULATOR_PID=""
    fi
    if [[ -n "${EMULATOR_TMP}" && -d "${EMULATOR_TMP}" ]]; then
        rm -rf "${EMULATOR_TMP}"
    fi
    EMULATOR_TMP=""
}

_emulator_on_exit() {
    local rc=$?
    emulator_stop
    exit "${rc}"
}

emulator_show_log() {
    if [[ -n "${EMULATOR_LOG}" && -s "${EMULATOR_LOG}" ]]; then
        echo "---- emulator log (last 40 lines) ----" >&2
        tail -n 40 "${EMULATOR_LOG}" >&2
        echo "--------------------------------------" >&2
    fi
}

emulator_start() {
    local python="$1" script="$2"
    shift 2

    if [[ ! -f "${script}" ]]; then
        echo "NAC emulator not found: ${script}" >&2
        return 1
    fi

    EMULATOR_TMP="$(mktemp -d "${TMPDIR:-/tmp}/nac-emulator.XXXXXX")"
    EMULATOR_LOG="${EMULATOR_TMP}/emulator.log"
    local port_file="${EMULATOR_TMP}/port"

    trap _emulator_on_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    "${python}" "${script}" --host 127.0.0.1 --port 0 --port-file "${port_file}" "$@" \
        >"${EMULATOR_LOG}" 2>&1 </dev/null &
    EMULATOR_PID=$!

    local deadline=$(( SECONDS + EMULATOR_START_TIMEOUT ))
    while :; do
        if [[ -s "${port_file}" ]]; then
            EMULATOR_PORT="$(tr -dc '0-9' <"${port_file}")"
            if [[ -n "${EMULATOR_PORT}" ]] && (exec 3<>"/dev/tcp/127.0.0.1/${EMULATOR_PORT}") 2>/dev/null; then
                break
            fi
        fi
        if ! kill -0 "${EMULATOR_PID}" 2>/dev/null; then
            echo "NAC emulator exited during start-up" >&2
            emulator_show_log
            EMULATOR_PID=""
            return 1
        fi
        if (( SECONDS >= deadline )); then
            echo "NAC emulator did not start listening within ${EMULATOR_START_TIMEOUT} s" >&2
            emulator_show_log
            return 1
        fi
        sleep 0.05
    done

    EMULATOR_URL="http://127.0.0.1:${EMULATOR_PORT}"
    export EMULATOR_PID EMULATOR_PORT EMULATOR_URL EMULATOR_LOG
}
