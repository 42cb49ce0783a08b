"""What out-of-tree classes put in the namespace of a class of vLLM's tree, as stubs.

`getattr(cls, "supports_pp", False)` on a model class is decided by the class's MRO, where
`torch.nn.Module`, `typing.Protocol` and `object` sit beside the tree's own classes. The walk
never reads those libraries, so, as type checkers keep typeshed's stubs, the public names each
one defines are written down here: a name listed is present, a public name not listed is absent,
and a private or special name (`_x`, `__x__`) is never decided by a stub. `torch.nn.Module`'s
list is checked against the installed torch by the differential test
(tests/differential/test_model_info.py); the standard library's against the running Python.
The interpreter asks for them through its Domain (`external_names`).
"""

from __future__ import annotations

# torch.nn.Module's public class attributes (torch 2.9-2.14): methods and class-level data
_TORCH_MODULE = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children",
    "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward",
    "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "ipu",
    "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "type", "xpu", "zero_grad",
})

PUBLIC_NAMES: dict[str, frozenset[str]] = {
    "builtins.object": frozenset(),
    "typing.Protocol": frozenset(),
    "typing.Generic": frozenset(),
    "typing_extensions.Protocol": frozenset(),
    "abc.ABC": frozenset(),
    "torch.nn.Module": _TORCH_MODULE,
    "torch.nn.modules.module.Module": _TORCH_MODULE,
}



def external_names(qualname: str) -> frozenset[str] | None:
    """The public names the out-of-tree class `qualname` has (its own and its bases'); None
    when no stub describes it."""
    return PUBLIC_NAMES.get(qualname)
