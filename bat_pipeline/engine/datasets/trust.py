"""What a dataset file may make the pipeline run.

Dataset files are data, often downloaded or shared (an EvalBench evalset, an AgentV
`tests: cases.jsonl`), yet in the peers' formats some of their fields run commands: an
EvalBench scenario's `env` reaches the CLI agent's process, where `PYTHONWARNINGS` +
`BROWSER` (or `PYTHONSTARTUP`, `LD_PRELOAD`, `NODE_OPTIONS`, ...) make it load or run code
of the dataset's choosing; an AgentV test read from an external tests file may carry script
graders, commands run on this machine. Unless the user trusts the datasets
(`bat-pipeline run --trust-datasets`, or `evaluation.trust_datasets: true` in their own
eval.yaml), both are refused when the dataset is read, naming the file, the entry and the
field. The user's own files (eval.yaml, an AgentV eval file's own tests, an EvalBench run
config) are trusted as they are.

Variables are refused by name from an explicit list (CODE_LOADING_VARS, and the prefixes
CODE_LOADING_PREFIXES): the variables the usual runtimes, shells and tools read to load a
library, a module or a start-up file, or to choose a program they run. Any other variable
(a locale, a model name, a feature flag) passes.
"""

from __future__ import annotations

CODE_LOADING_VARS = frozenset(
    {
        # Python
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONWARNINGS",  # a warning category is imported by name
        "PYTHONBREAKPOINT",
        "PYTHONINSPECT",
        "PYTHONUSERBASE",
        "PYTHONPLATLIBDIR",
        "PYTHONEXECUTABLE",
        "PYTHONPYCACHEPREFIX",
        # the dynamic loader, C libraries
        "GCONV_PATH",
        "HOSTALIASES",
        "LOCPATH",
        "NLSPATH",
        "MALLOC_TRACE",
        # Node, Perl, Ruby, Java, .NET
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_REPL_EXTERNAL_MODULE",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "DOTNET_STARTUP_HOOKS",
        # shells
        "BASH_ENV",
        "ENV",
        "ZDOTDIR",
        "PROMPT_COMMAND",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        # programs other programs start
        "PATH",
        "BROWSER",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MANPAGER",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_EXEC_PATH",
        "GIT_EXTERNAL_DIFF",
        "GIT_TEMPLATE_DIR",
        "LESSOPEN",
        "LESSCLOSE",
        "SUDO_ASKPASS",
    }
)
"""Variables that make a program load code or run a command named in their value."""

CODE_LOADING_PREFIXES = ("LD_", "DYLD_", "GIT_CONFIG_", "BASH_FUNC_")
"""The dynamic loader's variables (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, DYLD_INSERT_LIBRARIES),
git's configuration from the environment, bash's exported functions."""

TRUST_HINT = "refused unless the datasets are trusted (bat-pipeline run --trust-datasets)"


def loads_code(name: str) -> bool:
    """Whether a variable named so can make a program load code or run a command."""
    upper = name.upper()
    return upper in CODE_LOADING_VARS or upper.startswith(CODE_LOADING_PREFIXES)
