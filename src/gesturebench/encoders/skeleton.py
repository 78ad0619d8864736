"""The skeleton topology of EMAGE's FGD encoder (a skeleton-aware convolutional autoencoder in the
manner of Aberman et al. 2020), built from SMPL-X's hard-coded joint tree (`body.joints.PARENTS`).

The encoder works on *edges*: edge 0 joins the pelvis to a virtual joint (number `N_JOINTS`), edge
i ≥ 1 joins joint i's parent to joint i, so the 55 joints' rotations are 55 edges. A convolution
output for an edge sees the edges within `distance` hops (two edges are one hop apart when they
share a joint). Pooling merges the edges of each *chain* — a maximal path between the root, a
branching joint (more than two edges) and an end effector — two by two from the chain's far end,
leaving the first edge alone when the chain is odd; the last level merges each whole chain.
"""

from __future__ import annotations

from collections import deque

from gesturebench.body.joints import PARENTS
from gesturebench.data.records import N_JOINTS

Edge = tuple[int, int]


def smplx_edges() -> list[Edge]:
    """The 55 (parent joint, child joint) edges of the SMPL-X tree, the virtual root edge first."""
    return [(0, N_JOINTS)] + [(int(PARENTS[j]), j) for j in range(1, N_JOINTS)]


def edge_neighbours(edges: list[Edge], distance: int) -> list[list[int]]:
    """For each edge, the (sorted) indices of the edges at most `distance` hops from it, itself
    included."""
    adjacent = [
        [j for j, b in enumerate(edges) if j != i and set(a) & set(b)] for i, a in enumerate(edges)
    ]
    out = []
    for start in range(len(edges)):
        hops = {start: 0}
        queue = deque([start])
        while queue:
            i = queue.popleft()
            for j in adjacent[i]:
                if j not in hops:
                    hops[j] = hops[i] + 1
                    queue.append(j)
        out.append(sorted(j for j, h in hops.items() if h <= distance))
    return out


def edge_chains(edges: list[Edge]) -> list[list[int]]:
    """The edge chains, in depth-first order from joint 0 (children in edge order): a chain ends at
    a branching joint other than 0 (more than two edges) or at a joint with a single edge."""
    degree: dict[int, int] = {}
    for a, b in edges:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    chains: list[list[int]] = []

    def walk(joint: int, chain: list[int]) -> None:
        if joint != 0 and degree[joint] > 2:
            chains.append(chain)
            chain = []
        if degree[joint] == 1:
            chains.append(chain)
            return
        for i, (a, b) in enumerate(edges):
            if a == joint:
                walk(b, [*chain, i])

    walk(0, [])
    return chains


def pool_edges(edges: list[Edge], last: bool) -> tuple[list[list[int]], list[Edge]]:
    """The groups of edges merged by one pooling level and the edges they become (none for the
    last level, whose groups are whole chains)."""
    groups: list[list[int]] = []
    merged: list[Edge] = []
    for chain in edge_chains(edges):
        if last:
            groups.append(chain)
            continue
        if len(chain) % 2:
            groups.append(chain[:1])
            merged.append(edges[chain[0]])
            chain = chain[1:]
        for i in range(0, len(chain), 2):
            groups.append(chain[i : i + 2])
            merged.append((edges[chain[i]][0], edges[chain[i + 1]][1]))
    return groups, merged
