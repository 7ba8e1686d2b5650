"""The quick __init__ of frozen slots dataclasses (foosball.wire.quick_init) makes the same
objects as the dataclass's own."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from foosball.recording.format import WorldState
from foosball.wire import catalogue
from foosball.wire.quick_init import quick_init


@dataclasses.dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: float = 2.5
    c: tuple[int, ...] = ()


_Quick = quick_init(dataclasses.dataclass(frozen=True, slots=True)(
    type("_Quick", (), {"__annotations__": {"a": "int", "b": "float", "c": "tuple[int, ...]"},
                        "b": 2.5, "c": ()})))


def test_same_signature_defaults_and_objects() -> None:
    def parameters(cls: type) -> list[tuple[str, object, object]]:
        return [(p.name, p.default, p.kind) for p in inspect.signature(cls).parameters.values()]

    assert parameters(_Quick) == parameters(_Plain)
    assert _Quick.__init__.__code__.co_names  # replaced: calls the slots' setters
    for args, kwargs in (((1,), {}), ((1, 3.0), {}), ((1,), {"c": (4,)}), ((), {"a": 7})):
        quick, plain = _Quick(*args, **kwargs), _Plain(*args, **kwargs)
        assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    with pytest.raises(TypeError):
        _Quick()
    with pytest.raises(TypeError):
        _Quick(1, d=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Quick(1).a = 2  # type: ignore[misc]


def test_left_alone_unless_frozen_slots_and_plain() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int

    for cls in (NoSlots, Factory, Mutable):
        init = cls.__init__
        assert quick_init(cls).__init__ is init


@pytest.mark.parametrize("cls", [WorldState, *(
    v for v in vars(catalogue).values()
    if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == catalogue.__name__
    and v.__dataclass_params__.frozen and "__slots__" in v.__dict__  # type: ignore[attr-defined]
    and not hasattr(v, "__post_init__"))])  # (Spec checks itself: left as it is)
def test_every_message_and_the_world_state_set_each_field(cls: type) -> None:
    """Every message (and the simulator's world state) has the quick __init__, and it puts
    each argument in its own field, positionally and by name."""
    assert "_set0" in cls.__init__.__code__.co_names, f"{cls.__name__}: not quick"
    names = [f.name for f in dataclasses.fields(cls)]
    values = [object() for _ in names]
    for made in (cls(*values), cls(**dict(zip(names, values, strict=True)))):
        assert [getattr(made, n) for n in names] == values
