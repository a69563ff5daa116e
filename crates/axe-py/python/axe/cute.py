"""CuTe layouts: CuTe's notation, the layout algebra with every result checked, Axe conversions.

``axe.cute.Layout("(4,(2,3)):(1,(4,8))")``; operators are methods (``a.composition(b)``,
``a.logical_divide("<4:1, 2:1>")``, ...) and raise ``axe.CuteError`` where no layout has the answer.
"""

from ._axe import CuteLayout as Layout

__all__ = ["Layout"]
