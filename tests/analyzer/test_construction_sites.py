"""`analyzer.construction_sites.constructions`: what every mention of a class in the
tree's text says about its constructions, read from the statements that mention it."""

from __future__ import annotations

import textwrap

from analyzer.construction_sites import constructions

LAYER = textwrap.dedent('''
    import torch.nn as nn

    class LayerScale(nn.Module):
        """Scales by gamma; see LayerScale2d for the 2-D one."""
        def __init__(self, dim, init_values=1e-5, inplace=False):
            super().__init__()
            self.inplace = inplace
''')

BLOCK = textwrap.dedent('''
    from .layer_scale import LayerScale
    # LayerScale(dim, inplace=True) would write into the residual (a comment: no call)

    def helper(x):
        """Nothing here builds a LayerScale."""
        return x

    @register
    class Block(nn.Module):
        def __init__(self, dim, device=None, dtype=None):
            dd = {"device": device, "dtype": dtype}
            self.ls1 = LayerScale(dim, init_values=1e-5, **dd)
            self.ls2 = LayerScale(
                dim,
                init_values=1e-5,
            )
''')


def test_every_call_of_the_class_is_read_with_its_keywords_and_attribute():
    calls = constructions([LAYER, BLOCK], "LayerScale")
    assert sorted(calls, key=str) == sorted([(1, frozenset({"init_values", "device", "dtype"}), "ls1"),
                                             (1, frozenset({"init_values"}), "ls2")], key=str)


def test_a_string_that_is_the_class_name_anywhere_in_a_file_leaves_it_open():
    registry = BLOCK + '\n__all__ = ["Block", "LayerScale"]\n'
    assert constructions([LAYER, registry], "LayerScale") is None


def test_a_mention_that_is_no_call_leaves_it_open():
    passed = BLOCK + "\n\nfactory = partial(LayerScale, inplace=True)\n"
    assert constructions([LAYER, passed], "LayerScale") is None


def test_a_file_that_does_not_parse_is_read_whole():
    broken = BLOCK + "\n\nx = = 1\n"  # tokenizes, does not parse
    calls = constructions([LAYER, broken], "LayerScale")
    assert calls is not None and len(calls) == 2


def test_lines_keep_their_numbers_with_form_feeds_and_crlf():
    odd = BLOCK.replace("def helper(x):", "\x0c\ndef helper(x):").replace("\n", "\r\n")
    calls = constructions([LAYER, odd], "LayerScale")
    assert sorted(attr for _, _, attr in calls) == ["ls1", "ls2"]


def test_a_file_too_deep_for_cpythons_parser_is_read_whole():
    deep = BLOCK + "\n\nx = " + "-" * 200_000 + "1\n"  # CPython's parser runs out of memory on it
    calls = constructions([LAYER, deep], "LayerScale")
    assert calls is not None and len(calls) == 2
