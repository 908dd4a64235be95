_afdisk() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="afdisk"
                ;;
            afdisk,apply)
                cmd="afdisk__subcmd__apply"
                ;;
            afdisk,backup)
                cmd="afdisk__subcmd__backup"
                ;;
            afdisk,bench)
                cmd="afdisk__subcmd__bench"
                ;;
            afdisk,check)
                cmd="afdisk__subcmd__check"
                ;;
            afdisk,completions)
                cmd="afdisk__subcmd__completions"
                ;;
            afdisk,demo)
                cmd="afdisk__subcmd__demo"
                ;;
            afdisk,dump)
                cmd="afdisk__subcmd__dump"
                ;;
            afdisk,help)
                cmd="afdisk__subcmd__help"
                ;;
            afdisk,inspect)
                cmd="afdisk__subcmd__inspect"
                ;;
            afdisk,list)
                cmd="afdisk__subcmd__list"
                ;;
            afdisk,plan)
                cmd="afdisk__subcmd__plan"
                ;;
            afdisk,restore)
                cmd="afdisk__subcmd__restore"
                ;;
            afdisk,resume)
                cmd="afdisk__subcmd__resume"
                ;;
            afdisk,sector-size)
                cmd="afdisk__subcmd__sector__subcmd__size"
                ;;
            afdisk__subcmd__help,apply)
                cmd="afdisk__subcmd__help__subcmd__apply"
                ;;
            afdisk__subcmd__help,backup)
                cmd="afdisk__subcmd__help__subcmd__backup"
                ;;
            afdisk__subcmd__help,bench)
                cmd="afdisk__subcmd__help__subcmd__bench"
                ;;
            afdisk__subcmd__help,check)
                cmd="afdisk__subcmd__help__subcmd__check"
                ;;
            afdisk__subcmd__help,completions)
                cmd="afdisk__subcmd__help__subcmd__completions"
                ;;
            afdisk__subcmd__help,demo)
                cmd="afdisk__subcmd__help__subcmd__demo"
                ;;
            afdisk__subcmd__help,dump)
                cmd="afdisk__subcmd__help__subcmd__dump"
                ;;
            afdisk__subcmd__help,help)
                cmd="afdisk__subcmd__help__subcmd__help"
                ;;
            afdisk__subcmd__help,inspect)
                cmd="afdisk__subcmd__help__subcmd__inspect"
                ;;
            afdisk__subcmd__help,list)
                cmd="afdisk__subcmd__help__subcmd__list"
                ;;
            afdisk__subcmd__help,plan)
                cmd="afdisk__subcmd__help__subcmd__plan"
                ;;
            afdisk__subcmd__help,restore)
                cmd="afdisk__subcmd__help__subcmd__restore"
                ;;
            afdisk__subcmd__help,resume)
                cmd="afdisk__subcmd__help__subcmd__resume"
                ;;
            afdisk__subcmd__help,sector-size)
                cmd="afdisk__subcmd__help__subcmd__sector__subcmd__size"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        afdisk)
            opts="-h -V --logical-sector-size --physical-sector-size --alignment-offset --help --version list inspect check plan dump apply backup restore sector-size resume demo bench completions help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__apply)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --plan --yes --confirm --destroy-data --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__backup)
            opts="-o -h --logical-sector-size --physical-sector-size --alignment-offset --output --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__bench)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --partition --duration --write --probe --json --samples --plot --yes --confirm --destroy-data --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --write)
                    COMPREPLY=($(compgen -W "none free all" -- "${cur}"))
                    return 0
                    ;;
                --plot)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__check)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --json --strict --stripe --block-size --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stripe)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --block-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__completions)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --help bash zsh fish"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__demo)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --keep --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__dump)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help)
            opts="list inspect check plan dump apply backup restore sector-size resume demo bench completions help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__apply)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__backup)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__demo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__dump)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__plan)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__restore)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__resume)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__help__subcmd__sector__subcmd__size)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__inspect)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --json --stripe --block-size --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stripe)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --block-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__list)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__plan)
            opts="-o -h --logical-sector-size --physical-sector-size --alignment-offset --preset --preset-file --realign --from-sfdisk --strict --discard-data --replace --keep-signatures --table --grain --stripe --output --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preset)
                    COMPREPLY=($(compgen -W "data efi-root raid-member lvm zfs" -- "${cur}"))
                    return 0
                    ;;
                --preset-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-sfdisk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --discard-data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --table)
                    COMPREPLY=($(compgen -W "gpt dos" -- "${cur}"))
                    return 0
                    ;;
                --grain)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stripe)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__restore)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --yes --confirm --destroy-data --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__resume)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --journal --rollback --yes --confirm --destroy-data --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --journal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        afdisk__subcmd__sector__subcmd__size)
            opts="-h --logical-sector-size --physical-sector-size --alignment-offset --set --tool --allow-unknown-tool-version --let-tool-decide --yes --confirm --destroy-data --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --logical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --physical-sector-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alignment-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --set)
                    COMPREPLY=($(compgen -W "512 4096" -- "${cur}"))
                    return 0
                    ;;
                --tool)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _afdisk -o nosort -o bashdefault -o default afdisk
else
    complete -F _afdisk -o bashdefault -o default afdisk
fi
