#include "common/cli.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

namespace npuzzle::cli {
namespace {

// Edit distance: letters inserted, deleted or replaced.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The long names of the options of `app` ("--max-nodes").
std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

// The innermost command that was named on the command line.
const CLI::App* Innermost(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    if (sub->parsed()) return Innermost(*sub);
  }
  return &app;
}

// "--max_nodes=5" reads as "--max-nodes=5": the names the programs have
// always accepted. Values and arguments after "--" are untouched.
std::vector<std::string> Normalized(int argc, char** argv) {
  std::vector<std::string> args;
  bool rest = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") rest = true;
    if (!rest && absl::StartsWith(arg, "--")) {
      const size_t end = std::min(arg.find('='), arg.size());
      std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
      // "--metrics-listen=" sets the flag to "" (off); CLI11 would take
      // the next argument as its value instead.
      if (end + 1 == arg.size()) {
        args.push_back(arg.substr(0, end));
        args.push_back("");
        continue;
      }
    }
    args.push_back(arg);
  }
  return args;
}

}  // namespace

void Configure(CLI::App& app) {
  // A flag given twice takes its last value, as scripts that append to a
  // base command line expect; lists (--label) take every value.
  app.option_defaults()->always_capture_default()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_help_flag("-h,--help", "print this help and exit");
  app.footer("Every flag takes its value as --flag=VALUE or --flag VALUE.");
}

void ReadEnvironment(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || option->get_lnames()[0] == "help") continue;
    option->envname("NPUZZLE_" + absl::AsciiStrToUpper(absl::StrReplaceAll(option->get_lnames()[0], {{"-", "_"}})));
  }
  for (CLI::App* sub : app.get_subcommands({})) ReadEnvironment(*sub);
}

std::string Nearest(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::string::npos;
  const std::string flag = given.substr(0, given.find('='));
  for (const std::string& name : names) {
    const size_t d = Distance(flag, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  // A slip is a few letters; a flag that shares a prefix is a guess too.
  const bool near = best_distance <= std::max<size_t>(2, flag.size() / 3) ||
                    (!best.empty() && flag.size() > 4 && absl::StartsWith(best, flag));
  return near ? best : "";
}

void ParseOrExit(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args = Normalized(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* command = Innermost(app);
    std::cout << (command == &app ? app.help() : command->help(app.get_name()));
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    const CLI::App& command = *Innermost(app);
    std::string program = app.get_name();
    if (&command != &app) program += " " + command.get_name();
    std::cerr << program << ": ";
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      // What was left over: a flag this command does not have, or an
      // argument it takes none of.
      std::vector<std::string> extras = command.remaining();
      if (extras.empty()) extras = app.remaining(true);
      const std::string first = extras.empty() ? "" : extras.front();
      if (absl::StartsWith(first, "-")) {
        std::cerr << "unknown flag " << first.substr(0, first.find('='));
        if (const std::string near = Nearest(first, FlagNames(command)); !near.empty()) {
          std::cerr << " (did you mean " << near << "?)";
        }
      } else if (&command == &app && !app.get_subcommands({}).empty()) {
        std::cerr << "unknown command '" << first << "'";
      } else {
        std::cerr << "unexpected argument '" << first << "'";
      }
    } else if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && !app.get_subcommands({}).empty() &&
               app.get_subcommands().empty()) {
      const std::vector<std::string> extras = app.remaining();
      if (extras.empty() || absl::StartsWith(extras.front(), "-")) {
        std::cerr << "give a command";
      } else {
        std::cerr << "unknown command '" << extras.front() << "'";
      }
    } else {
      std::cerr << e.what();
      // A value from the environment: say which variable held it.
      std::vector<const CLI::Option*> options = static_cast<const CLI::App&>(app).get_options();
      if (&command != &app) {
        for (const CLI::Option* option : command.get_options()) options.push_back(option);
      }
      {
        for (const CLI::Option* option : options) {
          const std::string& variable = option->get_envname();
          const char* value = variable.empty() ? nullptr : std::getenv(variable.c_str());
          if (value != nullptr && absl::StrContains(e.what(), "--" + option->get_lnames().front())) {
            std::cerr << " (from " << variable << "='" << value << "')";
          }
        }
      }
    }
    std::cerr << "\n" << program << " --help lists the flags\n";
    std::exit(2);
  }
}

}  // namespace npuzzle::cli
