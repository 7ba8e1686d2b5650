#!/bin/sh
# A simulated U-Boot environment with boot counting, as RAUC's custom bootloader backend
# (system.conf: bootloader-custom-backend): get-primary, set-primary, get-state, set-state,
# get-current. The contract of meta-foosball's boot.cmd.in and of RAUC's U-Boot backend:
# BOOT_ORDER lists the slots to try, BOOT_x_LEFT the attempts left (3 when unset). The
# environment is a file of KEY=VALUE lines named by FOOSBALL_UBOOT_ENV; every write is also
# appended to <env>.writes, which the tests check. The power-on side (U-Boot's boot
# script choosing a slot) is uboot_env.py's choose_boot_slot.
#
# Shell, not Python: RAUC runs this for every slot each time its slot status is read, so it
# must start in milliseconds on a loaded machine and not depend on which python3 the PATH
# finds (under load `/usr/bin/env python3` took 4 s a call and RAUC stopped answering).
set -eu
env_file=${FOOSBALL_UBOOT_ENV:?FOOSBALL_UBOOT_ENV must name the environment file}
attempts=3
BOOT_ORDER="A B"
BOOT_A_LEFT=$attempts
BOOT_B_LEFT=$attempts
others=""
if [ -f "$env_file" ]; then
    while IFS='=' read -r key value; do
        case $key in
            BOOT_ORDER) BOOT_ORDER=$value ;;
            BOOT_A_LEFT) BOOT_A_LEFT=$value ;;
            BOOT_B_LEFT) BOOT_B_LEFT=$value ;;
            "") ;;
            *) others="$others$key=$value
" ;;
        esac
    done < "$env_file"
fi

left_of() {  # sets $left to the attempts left of slot $1
    case $1 in
        A) left=$BOOT_A_LEFT ;;
        B) left=$BOOT_B_LEFT ;;
        *) echo "uboot_env.sh: no slot '$1' (A or B)" >&2; exit 2 ;;
    esac
}

set_left() {  # slot $1 gets $2 attempts
    left_of "$1"
    case $1 in
        A) BOOT_A_LEFT=$2 ;;
        B) BOOT_B_LEFT=$2 ;;
    esac
}

in_order() {  # true when slot $1 is in BOOT_ORDER
    for slot in $BOOT_ORDER; do
        [ "$slot" = "$1" ] && return 0
    done
    return 1
}

without() {  # BOOT_ORDER without slot $1, in $rest
    rest=""
    for slot in $BOOT_ORDER; do
        [ "$slot" = "$1" ] || rest="${rest:+$rest }$slot"
    done
}

save() {  # the whole environment at once: a power cut leaves the old one or the new one
    printf '%sBOOT_A_LEFT=%s\nBOOT_B_LEFT=%s\nBOOT_ORDER=%s\n' "$others" "$BOOT_A_LEFT" \
        "$BOOT_B_LEFT" "$BOOT_ORDER" > "$env_file.tmp"
    mv -f "$env_file.tmp" "$env_file"
    echo "$*" >> "${env_file%.*}.writes"
}

command=${1:?a command: get-primary, set-primary, get-state, set-state, get-current}
case $command in
    get-primary)
        for slot in $BOOT_ORDER; do
            left_of "$slot"
            if [ "$left" -gt 0 ]; then echo "$slot"; exit 0; fi
        done ;;
    get-state)
        left_of "${2:?get-state SLOT}"
        if in_order "$2" && [ "$left" -gt 0 ]; then echo good; else echo bad; fi ;;
    get-current)
        echo "${FOOSBALL_BOOTED:-}" ;;
    set-primary)
        set_left "${2:?set-primary SLOT}" "$attempts"
        without "$2"
        BOOT_ORDER="$2${rest:+ $rest}"
        save "$@" ;;
    set-state)
        case ${3:?set-state SLOT good|bad} in
            good) set_left "$2" "$attempts" ;;
            bad) set_left "$2" 0; without "$2"; BOOT_ORDER=$rest ;;
            *) echo "uboot_env.sh: state '$3' is neither good nor bad" >&2; exit 2 ;;
        esac
        save "$@" ;;
    *)
        echo "uboot_env.sh: unknown command '$command'" >&2; exit 2 ;;
esac
