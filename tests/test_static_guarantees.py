"""Static guarantees over src/srcreview, each checked here rather than promised in prose.

- the analysed source is never imported or executed: no import of `vllm`, no eval/exec/compile,
  no dynamic import outside srcreview's own packages, no loader of arbitrary files;
- no subprocess gets a user-controlled string where git or pip would read an option;
- a crafted facts-cache entry cannot run code;
- no output carries an absolute local path or a credential from the environment.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

import srcreview

SRC = Path(srcreview.__file__).parent
MODULES = sorted(SRC.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def _trees():
    for path in MODULES:
        yield _rel(path), ast.parse(path.read_text(encoding="utf-8"), filename=_rel(path))


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def _functions(tree: ast.AST):
    """(enclosing function name, node) for every node, module level as ""."""
    def walk(node, scope):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            yield inner, child
            yield from walk(child, inner)
    yield from walk(tree, "")


def test_the_package_is_where_we_look():
    assert len(MODULES) > 20 and any(p.parent.name == "cli" and p.name == "main.py" for p in MODULES)


# ------------------------------------------------------------------------ never import or execute

FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "execfile", "builtins.eval", "builtins.exec",
                   "runpy.run_path", "runpy.run_module", "os.system", "os.popen", "pty.spawn",
                   "importlib.util.spec_from_file_location", "importlib.machinery.SourceFileLoader",
                   "subprocess.getoutput", "subprocess.getstatusoutput", "code.interact", "marshal.loads",
                   "marshal.load", "pickle.load", "pickle.loads", "pickle.Unpickler", "shelve.open", "yaml.load",
                   "yaml.unsafe_load", "dill.load", "dill.loads", "torch.load"}


def test_no_eval_exec_or_file_loaders():
    found = []
    for rel, tree in _trees():
        for _, node in _functions(tree):
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name in FORBIDDEN_CALLS or name.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
                    found.append(f"{rel}:{node.lineno}: {name}(")
                if isinstance(node.func, ast.Attribute) and node.func.attr in ("exec_module", "load_module"):
                    found.append(f"{rel}:{node.lineno}: .{node.func.attr}(")
    assert found == []


def test_unpicklers_are_restricted():
    """The only unpickling is through Unpickler subclasses that override find_class (the facts cache)."""
    subclasses = []
    for rel, tree in _trees():
        for _, node in _functions(tree):
            if isinstance(node, ast.ClassDef) and any(_dotted(b) == "pickle.Unpickler" for b in node.bases):
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                subclasses.append((rel, node.name, "find_class" in methods))
    assert subclasses and all(restricted for *_, restricted in subclasses), subclasses


def test_dynamic_imports_only_name_srcreview_modules():
    found = []
    for rel, tree in _trees():
        for _, node in _functions(tree):
            if isinstance(node, ast.Call) and _dotted(node.func) in ("importlib.import_module", "import_module"):
                arg = node.args[0] if node.args else None
                prefix = ""
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    prefix = arg.value
                elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                    prefix = str(arg.values[0].value)
                if not prefix.startswith("srcreview."):
                    found.append(f"{rel}:{node.lineno}")
    assert found == []


def test_no_module_imports_vllm_or_edits_sys_path():
    found = []
    for rel, tree in _trees():
        for _, node in _functions(tree):
            if isinstance(node, ast.Import):
                found += [f"{rel}:{node.lineno}: import {a.name}" for a in node.names
                          if a.name == "vllm" or a.name.startswith("vllm.")]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                    node.module == "vllm" or node.module.startswith("vllm.")):
                found.append(f"{rel}:{node.lineno}: from {node.module}")
            elif isinstance(node, ast.Call) and _dotted(node.func) in ("sys.path.insert", "sys.path.append",
                                                                         "sys.path.extend", "site.addsitedir"):
                found.append(f"{rel}:{node.lineno}: {_dotted(node.func)}")
    assert found == []


def test_reviewing_the_real_tree_imports_nothing_from_it(tmp_path):
    """Run the analysis on a fixture tree whose every module would leave a mark if imported."""
    import subprocess
    import sys

    tree = tmp_path / "tree"
    marker = tmp_path / "imported"
    body = f"open({str(marker)!r}, 'a').write(__name__)\n"
    files = {"vllm/__init__.py": body, "vllm/config/__init__.py": body,
             "vllm/config/speculative.py": body + "class SpeculativeConfig:\n    attention_backend: str | None = None\n",
             "vllm/engine/arg_utils.py": body + "def f(p):\n    p.add_argument('--attention-backend')\n"}
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    script = (
        "from pathlib import Path\n"
        "from srcreview.index import Index\n"
        "from srcreview.model.revision import resolve_rev\n"
        "from srcreview.source.base import DirectoryTree\n"
        f"idx = Index(DirectoryTree(Path({str(tree)!r}), resolve_rev('abcdef0')))\n"
        "for p in idx.python_files('vllm/'):\n"
        "    idx.module(p)\n"
        "print(len(idx.find('SpeculativeConfig')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={"PYTHONPATH": str(tree), "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    assert not marker.exists()


# ------------------------------------------------------------------------ subprocess arguments

SUBPROCESS_CALLS = {"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
                    "subprocess.check_output", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}

# Wrappers that pass their *args on to a subprocess, and the positional parameters before them.
WRAPPERS = {"run_git": 1}

# Non-literal arguments reviewed by hand: (module, function, expression) and why each is safe.
REVIEWED = {
    ("source/pipindex.py", "_pip_config", "python"): "the running interpreter (sys.executable), never user input",
    ("source/gitrepo.py", "_listing", "self.revision.sha"): "Revision.sha is validated 7-40 hex digits",
    ("source/gitrepo.py", "_missing_blobs", "sha"): "a full commit id git itself printed",
    ("source/gitrepo.py", "ensure", "revision.sha"): "Revision.sha is validated 7-40 hex digits",
}


def _is_safe_literal(node: ast.AST) -> bool:
    """A constant, or an f-string option whose value is attached (`--git-dir={x}`): never an option itself."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        head = str(node.values[0].value)
        return head.startswith("-") and "=" in head
    return False


def _check_args(rel: str, scope: str, args: list[ast.AST], local_lists: dict[str, ast.AST]) -> list[str]:
    problems = []
    after_end_of_options = False
    for arg in args:
        if isinstance(arg, ast.Constant) and arg.value in ("--", "--end-of-options"):
            after_end_of_options = True
            continue
        if isinstance(arg, ast.Starred):
            target = local_lists.get(_dotted(arg.value))
            if target is not None and all(_is_safe_literal(e) for e in target.elts):
                continue
            problems.append(f"{rel}:{arg.lineno} ({scope}): *{_dotted(arg.value)} is not a literal list")
            continue
        if _is_safe_literal(arg) or after_end_of_options:
            continue
        text = ast.unparse(arg)
        if (rel, scope, text) not in REVIEWED:
            problems.append(f"{rel}:{arg.lineno} ({scope}): {text} may reach the program as an option")
    return problems


def _subprocess_problems(trees) -> tuple[int, list[str]]:
    """(subprocess and wrapper calls seen, arguments that could be read as options)."""
    problems = []
    seen_calls = 0
    for rel, tree in trees:
        lists: dict[str, dict[str, ast.AST]] = {}
        for scope, node in _functions(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)):
                for target in node.targets:
                    lists.setdefault(scope, {})[_dotted(target)] = node.value
        for scope, node in _functions(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if name in SUBPROCESS_CALLS:
                seen_calls += 1
                if any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                       for k in node.keywords) or name == "asyncio.create_subprocess_shell":
                    problems.append(f"{rel}:{node.lineno}: a shell")
                argv = node.args[0] if node.args else None
                if not isinstance(argv, (ast.List, ast.Tuple)):
                    problems.append(f"{rel}:{node.lineno}: argv is not a literal list")
                    continue
                program, *rest = argv.elts
                if not isinstance(program, ast.Constant):
                    problems += _check_args(rel, scope, [program], {})
                if scope in WRAPPERS:
                    rest = [e for e in rest if not isinstance(e, ast.Starred)]  # checked at each call site
                problems += _check_args(rel, scope, rest, lists.get(scope, {}))
            elif name.rsplit(".", 1)[-1] in WRAPPERS:
                seen_calls += 1
                skip = WRAPPERS[name.rsplit(".", 1)[-1]]
                problems += _check_args(rel, scope, node.args[skip:], lists.get(scope, {}))
    return seen_calls, problems


def test_no_user_string_can_be_read_as_a_subprocess_option():
    seen_calls, problems = _subprocess_problems(_trees())
    assert seen_calls >= 5  # git and pip are called: the check is not vacuous
    assert problems == []


BAD_SNIPPET = """
import subprocess
def run_git(git_dir, *args):
    return subprocess.run(["git", f"--git-dir={git_dir}", *args])
def fetch(url, rev, ref):
    run_git(d, "fetch", url)                      # a URL from the environment could be "--upload-pack=..."
    run_git(d, "--end-of-options", rev)           # fine: after the end of options
    run_git(d, f"--x={rev}")                      # fine: attached
    run_git(d, f"{ref}:refs/x")                   # an f-string that starts with the user's text
    subprocess.run("git fetch " + url, shell=True)
    subprocess.run(["pip", "download", rev])
"""


def test_the_subprocess_check_catches_injectable_arguments():
    seen, problems = _subprocess_problems([("bad.py", ast.parse(BAD_SNIPPET))])
    assert seen == 7
    flagged = sorted(p.split(": ", 1)[1] for p in problems)
    assert flagged == ["a shell", "argv is not a literal list", "f'{ref}:refs/x' may reach the program as an option",
                       "rev may reach the program as an option", "url may reach the program as an option"]


def test_revision_sha_cannot_carry_an_option():
    from srcreview.core.records import RecordError
    from srcreview.model.revision import Revision

    with pytest.raises(RecordError):
        Revision(requested="x", sha="--upload-pack=touch")
    with pytest.raises(RecordError):
        Revision(requested="x", sha="98dff2a\n")
    assert Revision(requested="x", sha="98dff2a").sha == "98dff2a"


# ------------------------------------------------------------------------ the facts cache cannot run code

def _reduce_chain_payload(marker: Path) -> bytes:
    """A pickle naming only ModuleFacts and builtins.getattr that walks to eval and writes `marker`."""
    def s(text: str) -> bytes:
        raw = text.encode()
        return b"X" + len(raw).to_bytes(4, "little") + raw

    getattr_ = b"cbuiltins\ngetattr\n"
    facts = b"csrcreview.index.facts\nModuleFacts\n"

    def ga(obj: bytes, name: str) -> bytes:
        return getattr_ + b"(" + obj + s(name) + b"tR"

    def call(fn: bytes, *args: bytes) -> bytes:
        return fn + b"(" + b"".join(args) + b"tR"

    builtins_ = call(ga(ga(ga(facts, "__init__"), "__globals__"), "get"), s("__builtins__"))
    eval_ = call(ga(builtins_, "get"), s("eval"))
    return b"\x80\x02" + call(eval_, s(f"open({str(marker)!r}, 'w').write('pwned')")) + b"."


def test_a_crafted_facts_entry_cannot_run_code(tmp_path):
    from srcreview.index.cache import _BUILTINS, FactsCache, seal

    dangerous = {"getattr", "setattr", "eval", "exec", "compile", "open", "__import__", "globals", "vars",
                 "apply", "input", "breakpoint", "delattr"}
    assert not {name for _, name in _BUILTINS} & dangerous

    marker = tmp_path / "pwned"
    cache = FactsCache(tmp_path / "cache")
    blob = "ab" * 20
    entry = cache._path(blob)
    entry.parent.mkdir(parents=True)
    entry.write_bytes(seal(_reduce_chain_payload(marker)))  # sealed: the unpickler itself must refuse it
    assert cache.load(blob, "vllm.x", "vllm/x.py") is None
    assert not marker.exists()


def test_the_payload_is_live_under_a_plain_unpickler(tmp_path):
    """The guard above is meaningful: the same bytes do run code when nothing restricts them."""
    import pickle

    marker = tmp_path / "pwned"
    pickle.Unpickler(io.BytesIO(_reduce_chain_payload(marker))).load()
    assert marker.read_text() == "pwned"


# ------------------------------------------------------------------------ outputs: no paths, no secrets

SECRET = "s3cr3t-T0KEN-9f8e7d"


@pytest.fixture
def hostile_env(tmp_path, monkeypatch, refused_url):
    """Credentials in every URL the tools may use, HOME and the cache under distinctive absolute paths."""
    home = tmp_path / "home-of-someone"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache-dir-xyz"))
    monkeypatch.setenv("PIP_INDEX_URL", refused_url.replace("http://", f"http://user:{SECRET}@") + "/simple")
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", refused_url.replace("http://", f"http://user:{SECRET}@") + "/gh")
    monkeypatch.setenv("SRCREVIEW_GIT_URL", refused_url.replace("http://", f"http://user:{SECRET}@") + "/vllm.git")
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    from srcreview.source import http as nethttp

    monkeypatch.setattr(nethttp, "BACKOFF_SECONDS", 0.01)  # retries stay, the waiting goes
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _clean(result, root: Path) -> None:
    text = result.out + result.err
    assert SECRET not in text
    assert str(root) not in text
    assert "Traceback" not in text


@pytest.mark.parametrize("provider", ["registry", "github", "git", "auto"])
def test_failed_fetch_names_no_secret_and_no_local_path(hostile_env, cli, provider):
    result = cli("fetch", "--rev", "0.29.0", "--provider", provider)
    assert result.code == 2, result
    assert result.err.startswith("srcreview: error: ")
    _clean(result, hostile_env)


def test_index_token_in_the_query_string_is_not_shown(hostile_env, cli, monkeypatch, refused_url):
    monkeypatch.setenv("PIP_INDEX_URL", f"{refused_url}/simple?token={SECRET}")
    result = cli("fetch", "--rev", "0.29.0", "--provider", "registry")
    assert result.code == 2, result
    _clean(result, hostile_env)


@pytest.fixture
def small_repo(hostile_env, make_git_repo):
    repo = make_git_repo("checkout")
    sha = repo.commit({"vllm/__init__.py": "", "vllm/envs.py": "VLLM_USE_V2_MODEL_RUNNER = None\n",
                       "vllm/config/speculative.py": "class SpeculativeConfig:\n    attention_backend: str | None = None\n"})
    return repo, sha


def test_local_sources_are_described_without_their_path(small_repo, hostile_env, cli):
    repo, sha = small_repo
    for args in (("fetch", "--rev", sha, "--source", str(repo.path)),
                 ("show", "--rev", sha, "--source", str(repo.path), "vllm/envs.py:1"),
                 ("fetch", "--rev", sha, "--source", str(hostile_env / "missing-dir"))):
        result = cli(*args)
        assert result.code in (0, 64), result
        _clean(result, hostile_env)


def test_audit_output_has_no_local_path(small_repo, hostile_env, cli):
    repo, sha = small_repo
    review = {"artifacts": {"pinned_runtime": {"source_urls": [
        {"url": f"https://github.com/vllm-project/vllm/blob/{sha}/vllm/envs.py#L1", "purpose": "VLLM_USE_V2_MODEL_RUNNER"},
        {"url": f"https://github.com/vllm-project/vllm/blob/{sha}/vllm/none.py#L1", "purpose": "attention_backend"},
    ]}}}
    (hostile_env / "review.json").write_text(json.dumps(review))
    for fmt in ("text", "json"):
        result = cli("audit", str(hostile_env / "review.json"), "--source", str(repo.path), "--format", fmt)
        assert result.code == 0, result
        _clean(result, hostile_env)


def test_invalid_recipe_errors_name_the_recipe_as_given(hostile_env, cli):
    (hostile_env / "bad.toml").write_text("[recipe]\nname = 1\n")
    result = cli("check", "bad.toml", "--rev", "0.29.0")
    assert result.code == 65
    assert result.err.startswith("srcreview: error: bad.toml:2:")
    _clean(result, hostile_env)


def _user_cache_root() -> Path:
    from srcreview.source.cache import default_root

    return default_root()[0]


USER_CACHE = _user_cache_root()  # read before any test changes the environment


def test_check_in_every_format_names_no_local_path(vllm_029, hostile_env, cli, monkeypatch):
    """A full review of an example recipe, source given as a local sdist directory; the warm user cache."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(USER_CACHE))
    recipe = Path(__file__).parents[1] / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
    (hostile_env / "recipe.toml").write_bytes(recipe.read_bytes())
    source = str(vllm_029.root)
    first = cli("check", "recipe.toml", "--rev", "0.29.0", "--source", source, "--format", "json",
                "--sarif", "out.sarif", "--markdown", "out.md")
    second = cli("check", "recipe.toml", "--rev", "0.29.0", "--source", source, "--format", "review", "-v")
    assert first.code in (0, 1) and second.code in (0, 1), (first.err, second.err)
    for result in (first, second):
        _clean(result, hostile_env)
        assert source not in result.out + result.err and str(USER_CACHE) not in result.out + result.err
    for name in ("out.sarif", "out.md"):
        text = (hostile_env / name).read_text()
        assert str(hostile_env) not in text and source not in text and SECRET not in text
    (hostile_env / "saved.json").write_text(first.out)
    finding = json.loads(first.out)["reviews"][0]["findings"][0]["id"]
    others = [cli("explain", finding, "--review", "saved.json", "--source", source),
              cli("graph", "--rev", "0.29.0", "--source", source, "--from", "MTPSpeculator.load_draft_model",
                  "--to", "get_model", "--recipe", "recipe.toml", "--format", "json")]
    for result in others:
        assert result.code == 0, result.err
        _clean(result, hostile_env)
        assert source not in result.out + result.err and str(USER_CACHE) not in result.out + result.err
