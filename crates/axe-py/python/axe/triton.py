"""Triton linear layouts and Gluon layouts with Triton's semantics, and their Axe forms.

``axe.triton.LinearLayout(bases_json_or_ttg)`` or
``axe.triton.LinearLayout("BlockedLayout(...)", shape=[32, 16])``; ``gluon_to_axe`` lays out the
shapes Triton cannot (not powers of two), ``hardware_map`` lists which register, lane and warp hold
each element of such an Axe layout. A ``PaddedSharedLayout(...)`` carries its shape: its linear
component is ``LinearLayout(text)``, its placement in padded memory ``gluon_to_axe(text, shape)``, and
``padding_of(text)`` gives its pairs, where each logical offset is stored and the padded size.
"""

from ._axe import LinearLayout, gluon_to_axe, padding_of
from ._axe import hardware_map_of as hardware_map

__all__ = ["LinearLayout", "gluon_to_axe", "hardware_map", "padding_of"]
