#include "cmd_completion.h"

#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace envelope::cli {
namespace {

struct OptionInfo {
    std::vector<std::string> names;   // "--format", "-o"
    std::vector<std::string> choices; // from the type name --help prints: TEXT:{json,text}
    bool takesValue = false;
    bool file = false; // its value is a path (-o FILE, --model CONFIG.json)
};

struct CommandInfo {
    std::string name;
    std::vector<OptionInfo> options;
    std::vector<std::string> positionalChoices; // the first positional's, when it has choices
};

// "TEXT:{json,text,markdown}" -> json text markdown (CLI11's IsMember, as --help shows it).
std::vector<std::string> choicesOf(const std::string& typeName)
{
    std::vector<std::string> out;
    const std::size_t open = typeName.find('{'), close = typeName.rfind('}');
    if (open == std::string::npos || close == std::string::npos || close < open)
        return out;
    std::string item;
    for (char c : typeName.substr(open + 1, close - open - 1)) {
        if (c == ',') {
            out.push_back(item);
            item.clear();
        } else if (c != ' ') {
            item += c;
        }
    }
    if (!item.empty())
        out.push_back(item);
    return out;
}

std::vector<CommandInfo> describe(const CLI::App& app)
{
    std::vector<CommandInfo> commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        CommandInfo info { sub->get_name(), {}, {} };
        for (const CLI::Option* o : sub->get_options()) {
            if (o->get_positional()) {
                if (info.positionalChoices.empty())
                    info.positionalChoices = choicesOf(o->get_type_name());
                continue;
            }
            if (o == sub->get_help_ptr())
                continue; // every command's --help is added once, below
            OptionInfo opt;
            for (const std::string& l : o->get_lnames())
                opt.names.push_back("--" + l);
            for (const std::string& s : o->get_snames())
                opt.names.push_back("-" + s);
            opt.takesValue = o->get_expected_max() > 0; // a flag takes none
            opt.choices = choicesOf(o->get_type_name());
            for (const std::string& n : opt.names)
                opt.file = opt.file || n == "--output" || n == "--model";
            if (!opt.names.empty())
                info.options.push_back(std::move(opt));
        }
        commands.push_back(std::move(info));
    }
    return commands;
}

std::string join(const std::vector<std::string>& words, const char* sep = " ")
{
    std::string s;
    for (const std::string& w : words)
        s += (s.empty() ? "" : sep) + w;
    return s;
}

std::vector<std::string> commandNames(const std::vector<CommandInfo>& commands)
{
    std::vector<std::string> names;
    for (const CommandInfo& c : commands)
        names.push_back(c.name);
    return names;
}

std::string bashScript(const std::vector<CommandInfo>& commands)
{
    const std::vector<std::string> names = commandNames(commands);
    // Preset ids come from `envelope-cli presets KIND`, so user presets complete too; --set
    // offers the plan's top-level keys and completes model=, gpu= and training.recipe= ids.
    std::string s = "# bash completion for envelope-cli (envelope-cli completion bash)\n"
                    "_envelope_cli_presets()\n{\n"
                    "    envelope-cli presets \"$1\" 2>/dev/null | cut -d' ' -f1\n}\n\n"
                    "_envelope_cli()\n{\n"
                    "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                    "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
                    "        COMPREPLY=( $(compgen -W \"" + join(names) + " --help --version\" -- \"$cur\") )\n"
                    "        return\n    fi\n"
                    "    case \"$prev\" in\n"
                    "    --model)\n"
                    "        COMPREPLY=( $(compgen -W \"$(_envelope_cli_presets models)\" -- \"$cur\") $(compgen -f -- \"$cur\") )\n"
                    "        return ;;\n"
                    "    --set)\n"
                    "        case \"$cur\" in\n"
                    "        model=*) COMPREPLY=( $(compgen -P model= -W \"$(_envelope_cli_presets models)\" -- \"${cur#model=}\") ) ;;\n"
                    "        gpu=*) COMPREPLY=( $(compgen -P gpu= -W \"$(_envelope_cli_presets gpus)\" -- \"${cur#gpu=}\") ) ;;\n"
                    "        training.recipe=*) COMPREPLY=( $(compgen -P training.recipe= -W \"$(_envelope_cli_presets recipes)\" -- \"${cur#training.recipe=}\") ) ;;\n"
                    "        *) COMPREPLY=( $(compgen -W \"model= gpu= name= cluster. training. serving. rl.\" -- \"$cur\") ); compopt -o nospace 2>/dev/null ;;\n"
                    "        esac\n"
                    "        return ;;\n"
                    "    esac\n"
                    "    case \"${COMP_WORDS[1]}\" in\n";
    for (const CommandInfo& c : commands) {
        s += "    " + c.name + ")\n        case \"$prev\" in\n";
        std::vector<std::string> all { "--help" };
        std::vector<std::string> fileOptions, valueOptions;
        for (const OptionInfo& o : c.options) {
            for (const std::string& n : o.names)
                all.push_back(n);
            if (!o.choices.empty())
                s += "        " + join(o.names, "|") + ") COMPREPLY=( $(compgen -W \"" + join(o.choices)
                    + "\" -- \"$cur\") ); return ;;\n";
            else if (o.file)
                fileOptions.insert(fileOptions.end(), o.names.begin(), o.names.end());
            else if (o.takesValue)
                valueOptions.insert(valueOptions.end(), o.names.begin(), o.names.end());
        }
        if (!fileOptions.empty())
            s += "        " + join(fileOptions, "|") + ") COMPREPLY=( $(compgen -f -- \"$cur\") ); return ;;\n";
        // A number or a PATH=VALUE: nothing to offer.
        if (!valueOptions.empty())
            s += "        " + join(valueOptions, "|") + ") COMPREPLY=(); return ;;\n";
        s += "        esac\n";
        s += "        if [[ \"$cur\" == -* ]]; then\n            COMPREPLY=( $(compgen -W \"" + join(all)
            + "\" -- \"$cur\") )\n";
        if (!c.positionalChoices.empty())
            s += "        elif [ \"$COMP_CWORD\" -eq 2 ]; then\n            COMPREPLY=( $(compgen -W \""
                + join(c.positionalChoices) + "\" -- \"$cur\") )\n";
        s += "        else\n            COMPREPLY=( $(compgen -f -- \"$cur\") )\n        fi\n        ;;\n";
    }
    s += "    esac\n}\ncomplete -o filenames -F _envelope_cli envelope-cli\n";
    return s;
}

std::string fishScript(const std::vector<CommandInfo>& commands)
{
    const std::vector<std::string> names = commandNames(commands);
    std::string s = "# fish completion for envelope-cli (envelope-cli completion fish)\n"
                    "complete -c envelope-cli -f -n __fish_use_subcommand -a '" + join(names) + "'\n";
    for (const CommandInfo& c : commands) {
        const std::string when = "-n '__fish_seen_subcommand_from " + c.name + "'";
        if (!c.positionalChoices.empty())
            s += "complete -c envelope-cli " + when + " -f -a '" + join(c.positionalChoices) + "'\n";
        for (const OptionInfo& o : c.options) {
            std::string line = "complete -c envelope-cli " + when;
            for (const std::string& n : o.names)
                line += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
            if (!o.choices.empty())
                line += " -x -a '" + join(o.choices) + "'";
            else if (o.file)
                line += " -r -F";
            else if (o.takesValue)
                line += " -x";
            s += line + "\n";
        }
    }
    return s;
}

// zsh: the bash function through bashcompinit, zsh's own bridge for bash completion functions.
std::string zshScript(const std::vector<CommandInfo>& commands)
{
    return "#compdef envelope-cli\n# zsh completion for envelope-cli (envelope-cli completion zsh)\n"
           "autoload -U +X bashcompinit && bashcompinit\n"
        + bashScript(commands);
}

} // namespace

void registerCompletion(CLI::App& app, CompletionCommand& c)
{
    c.command = app.add_subcommand("completion",
        "Print a shell completion script: bash, zsh or fish (e.g. source <(envelope-cli completion bash))");
    c.command->add_option("SHELL", c.shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({ "bash", "zsh", "fish" }));
}

int runCompletion(const CLI::App& app, const CompletionCommand& c)
{
    const std::vector<CommandInfo> commands = describe(app);
    if (c.shell == "fish")
        std::cout << fishScript(commands);
    else if (c.shell == "zsh")
        std::cout << zshScript(commands);
    else
        std::cout << bashScript(commands);
    return 0;
}

} // namespace envelope::cli
