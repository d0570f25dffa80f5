"""The Memory API this branch added, on every store: clear, namespaces, stored names."""

from __future__ import annotations

from ctxneo import Memory


def test_clear_deletes_everything_the_memory_holds(memory: Memory) -> None:
    memory.declare_multi_valued("DEPENDS_ON")
    memory.remember("A", "DEPENDS_ON", "B")
    memory.remember("A", "OWNED_BY", "C")
    memory.alias("the a", "A")
    memory.clear()
    assert memory.stats()["facts"] == 0
    assert memory.facts("A", history=True) == [] and memory.store.aliases() == {}
    memory.remember("A", "OWNED_BY", "D")  # a cleared memory is a memory like any other
    assert [f.object for f in memory.current("A")] == ["D"]


def test_names_that_differ_only_in_case_are_found(memory: Memory) -> None:
    memory.remember("Service_Payments", "OWNED_BY", "Payments_Team")
    memory.remember("Payments", "HAS_STATUS", "green")
    assert memory.stored_names("service_payments") == ["Service_Payments"]
    assert memory.stored_names("PAYMENTS_TEAM") == ["Payments_Team"]
    assert memory.stored_names("Service_Payments") == []  # the stored name itself
    assert memory.stored_names("payment") == []  # a word of it is not the name


def test_namespaces_list_the_memories_of_a_server_or_are_none(memory: Memory) -> None:
    memory.remember("A", "OWNED_BY", "B")
    memory.remember("A", "OWNED_BY", "C")
    found = memory.namespaces()
    namespace = getattr(memory.store, "namespace", None)
    if namespace is None:
        assert found is None  # the embedded store holds one memory
    else:
        assert found is not None
        assert found[namespace] == {"facts": 2, "current_facts": 1, "entities": 3, "last_seq": 2}
