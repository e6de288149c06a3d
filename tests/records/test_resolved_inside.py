"""``resolved_inside`` is ``Path.resolve`` (issue 28, session 45): random trees of folders, files and links."""

from __future__ import annotations

import os
import random
from pathlib import Path

from gatestats.records.runset import contained, resolved_inside

NAMES = ["a", "b", "c", "f.txt", "l1", "l2", "missing"]


def _tree(root: Path, outside: Path, rng: random.Random) -> None:
    """Folders, files and links (inside, outside, to folders and files, dangling, loops) under ``root``."""
    folders = [root]
    for _ in range(rng.randint(1, 6)):
        folder = rng.choice(folders) / rng.choice(["a", "b", "c"])
        folder.mkdir(exist_ok=True)
        folders.append(folder)
    for folder in folders:
        if rng.random() < 0.7:
            (folder / "f.txt").write_text("x")
    for folder in folders:
        for name in ("l1", "l2"):
            if rng.random() < 0.5 and not (folder / name).exists() and not (folder / name).is_symlink():
                kind = rng.randrange(6)
                target: str | Path
                if kind == 0:
                    target = rng.choice(folders)  # a folder inside, absolute
                elif kind == 1:
                    target = os.path.relpath(rng.choice(folders), folder)  # a folder inside, relative
                elif kind == 2:
                    target = outside  # outside the run set
                elif kind == 3:
                    target = folder / name  # itself: a loop
                elif kind == 4:
                    target = folder / "missing"  # dangling
                else:
                    target = folder / ("l2" if name == "l1" else "l1")  # maybe a loop of two
                (folder / name).symlink_to(target)


def _outcome(base: Path, rel: str, links: dict[str, bool] | None) -> tuple[str, object]:
    """What ``Path.resolve`` (``links`` None) or ``resolved_inside`` gives: the path, or the exception's type."""
    try:
        return "ok", (base / rel).resolve() if links is None else resolved_inside(base, rel, links)
    except (OSError, RuntimeError) as exc:
        return "raised", type(exc)


def test_resolved_inside_is_path_resolve_on_random_trees(tmp_path: Path) -> None:
    rng = random.Random(20261205)
    compared = through_links = 0
    for index in range(60):
        top = tmp_path / str(index)
        root, outside = top / "run set", top / "outside"
        root.mkdir(parents=True)
        outside.mkdir()
        _tree(root, outside, rng)
        base = root.resolve()
        links: dict[str, bool] = {}  # shared across the tree's paths, as the run set reader shares it
        for _ in range(40):
            parts = [rng.choice([*NAMES, ".", ""]) for _ in range(rng.randint(1, 5))]
            rel = "/".join(parts)
            if not rel.strip("/") or rel.startswith("/"):  # relative paths only (absolute ones are refused before)
                continue
            expected = _outcome(base, rel, None)
            assert _outcome(base, rel, links) == expected, rel
            assert _outcome(base, rel, {}) == expected, rel
            compared += 1
            through_links += any(links.get(p) for p in links if p.startswith(str(base)))
    assert compared > 2000
    assert through_links > 100  # the trees do have links on the paths looked at


def test_contained_with_and_without_the_shared_memory_agree(tmp_path: Path) -> None:
    root, outside = tmp_path / "rs", tmp_path / "out"
    (root / "evidence").mkdir(parents=True)
    outside.mkdir()
    (root / "evidence" / "stdout.txt").write_text("x")
    (root / "escape").symlink_to(outside)
    base = root.resolve()
    links: dict[str, bool] = {}
    for rel in ["evidence/stdout.txt", "./evidence//stdout.txt", "escape/x", "evidence/none", "../x", "/abs"]:
        assert contained(base, rel, links=links) == contained(base, rel)
    assert (
        contained(base, "escape/x", links=links)[1]
        == "evidence path 'escape/x' points outside the run set (through a symlink)"
    )
    assert contained(base, "./evidence//stdout.txt", links=links) == (base / "evidence" / "stdout.txt", None)
