"""A shaded triangle-mesh rasteriser in torch: z-buffer, smooth (Phong-interpolated) normals, one
fixed directional light; runs headless on CPU (and on GPU) with nothing but torch.

Why not a library: the maintained renderers on PyPI (pyrender, moderngl, open3d, vtk) all draw
through an OpenGL driver (EGL or OSMesa) of the system, which a CPU-only machine with only the
project's install need not have (docs/rendering.md). This one is vectorised over frames and
triangles:

1. Each triangle's pixel bounding box is enumerated on a k×k grid, k the box side rounded up to a
   power of two (triangles are bucketed by k, so a hand's 1-pixel triangles do not pay for a
   torso's 20-pixel ones).
2. A pixel centre is inside when its three barycentric coordinates are ≥ 0 (edges shared by two
   triangles may be drawn by either: the z-buffer decides).
3. Depth test in one `scatter_reduce(amax)`: the key of a (pixel, triangle) pair is its quantised
   depth in the high bits and the triangle's index in the low bits, so the maximum key is the
   nearest triangle and names it.
4. The winning triangle's barycentrics interpolate the vertex normals (area-weighted face normals,
   turned toward the viewer so the winding of the model file does not matter); Lambert shading
   with an ambient term.

Coordinates: pixel x to the right, pixel y downward, z toward the viewer (larger is nearer),
orthographic. `supersample` renders at s× the size and averages s×s blocks (antialiasing).
"""

from __future__ import annotations

import torch

#: Light direction in view coordinates (x right, y up, z toward the viewer): from the viewer's
#: upper left.
LIGHT = (-0.35, 0.55, 1.0)
#: Body colour (RGB 0–1), background colour, ambient share of the light.
BODY_RGB = (0.62, 0.70, 0.84)
BACKGROUND_RGB = (1.0, 1.0, 1.0)
AMBIENT = 0.3

_DEPTH_BITS = 30
_INDEX_BITS = 32


def vertex_normals(verts: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """(B,V,3) vertices, (F,3) faces → (B,V,3) unit normals (sum of the adjacent faces'
    area-weighted normals)."""
    tri = verts[:, faces]
    face_n = torch.linalg.cross(tri[:, :, 1] - tri[:, :, 0], tri[:, :, 2] - tri[:, :, 0], dim=-1)
    normals = torch.zeros_like(verts)
    for corner in range(3):
        normals.index_add_(1, faces[:, corner], face_n)
    return torch.nn.functional.normalize(normals, dim=-1)


def rasterize(
    pixels: torch.Tensor, faces: torch.Tensor, size: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(B,V,3) vertices in pixel coordinates (x, y, depth), (F,3) faces → the covered pixels
    (flat indices into (B,size,size)), the frame·F + face index of the nearest triangle there and
    its barycentric coordinates (P,3).

    A pixel is covered when its centre (x+0.5, y+0.5) lies inside a front-facing triangle (closed
    edges). Front-facing: wound like the outside of the mesh, which is read from the sign of the
    frame's signed volume, so a model file wound either way renders the same."""
    b, f = pixels.shape[0], faces.shape[0]
    device = pixels.device
    tri = pixels[:, faces]  # (B,F,3,3)
    plane, twice_area = _planes(tri)
    volume = (tri[:, :, 0] * torch.linalg.cross(tri[:, :, 1], tri[:, :, 2], dim=-1)).sum((1, 2))
    front = (twice_area * volume.unsqueeze(1) > 0).view(-1)
    # pixel rows whose centres lie within each triangle's height
    y = tri[..., 1].reshape(b * f, 3)
    top = torch.ceil(y.amin(dim=1) - 0.5).clamp(min=0).long()
    rows = torch.floor(y.amax(dim=1) - 0.5).clamp(max=size - 1).long() - top + 1
    drawn = torch.nonzero(front & (rows > 0)).squeeze(1)  # frame·F + face
    spans = _spans(plane.view(b * f, 12), drawn, top, rows, size)
    pair, x0, n = spans["triangle"], spans["x0"], spans["n"]
    # one candidate per pixel of every span: the pixels inside the triangles, each drawn once
    of = torch.repeat_interleave(torch.arange(len(n), device=device), n)
    x = x0.index_select(0, of) + torch.arange(len(of), device=device)
    x -= (torch.cumsum(n, 0) - n).index_select(0, of)
    z = spans["z0"].index_select(0, of) + spans["dz"].index_select(0, of) * (x + 0.5)
    z_lo, z_hi = tri[..., 2].amin(), tri[..., 2].amax()
    z_scale = ((1 << _DEPTH_BITS) - 1) / torch.clamp(z_hi - z_lo, min=1e-12)
    key = ((z - z_lo) * z_scale).long().clamp(0, (1 << _DEPTH_BITS) - 1) << _INDEX_BITS
    triangle = pair.index_select(0, of)
    key |= triangle
    flat = ((triangle // f) * size + spans["row"].index_select(0, of)) * size + x
    zbuf = torch.full((b * size * size,), -1, dtype=torch.long, device=device)
    zbuf.scatter_reduce_(0, flat, key, reduce="amax")
    covered = torch.nonzero(zbuf >= 0).squeeze(1)
    winner = zbuf.index_select(0, covered) & ((1 << _INDEX_BITS) - 1)
    centre = torch.stack([covered % size, covered // size % size], dim=-1).to(pixels.dtype) + 0.5
    win = plane.view(-1, 4, 3).index_select(0, winner)[:, :3]
    bary = (win[..., :2] * centre.unsqueeze(1)).sum(-1) + win[..., 2]
    return covered, winner, bary


def _spans(
    plane: torch.Tensor, drawn: torch.Tensor, top: torch.Tensor, rows: torch.Tensor, size: int
) -> dict[str, torch.Tensor]:
    """The horizontal pixel span of each (triangle, row) pair: for each of the `drawn` triangles
    (their (12,) plane coefficients in `plane`) and each of its `rows` from `top`, the first pixel
    `x0` and count `n` of the pixels whose centres lie inside, and the depth along the row
    (z = z0 + dz·x)."""
    device = plane.device
    counts = rows.index_select(0, drawn)
    of = torch.repeat_interleave(torch.arange(len(drawn), device=device), counts)
    triangle = drawn.index_select(0, of)
    row = top.index_select(0, triangle) + torch.arange(len(of), device=device)
    row -= (torch.cumsum(counts, 0) - counts).index_select(0, of)
    coef = plane.index_select(0, triangle).view(-1, 4, 3)
    cy = row.to(plane.dtype) + 0.5
    slope = coef[..., 0]  # each barycentric (and the depth) along the row: slope·x + offset
    offset = coef[..., 1] * cy.unsqueeze(1) + coef[..., 2]
    # w_i ≥ 0 ⇔ x ≥ -offset/slope (slope > 0), x ≤ -offset/slope (slope < 0), offset ≥ 0 (slope 0)
    bound = -offset[:, :3] / torch.where(slope[:, :3] == 0, 1.0, slope[:, :3])
    inf = torch.tensor(float("inf"), dtype=plane.dtype, device=device)
    never = (slope[:, :3] == 0) & (offset[:, :3] < 0)
    left = torch.where(slope[:, :3] > 0, bound, -inf).amax(dim=1)
    right = torch.where(slope[:, :3] < 0, bound, inf).amin(dim=1)
    right = torch.where(never.any(dim=1), -inf, right)
    x0 = torch.ceil(left.clamp(min=0.0, max=size) - 0.5).long()
    x1 = torch.floor(right.clamp(min=-1.0, max=size) - 0.5).long().clamp(max=size - 1)
    return {
        "triangle": triangle,
        "row": row,
        "x0": x0,
        "n": (x1 - x0 + 1).clamp(min=0),
        "z0": offset[:, 3],
        "dz": slope[:, 3],
    }


def _planes(tri: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(...,3,3) triangles → the (...,4,3) coefficients (a, b, c) of each barycentric coordinate and
    of the depth as a·x + b·y + c over the image plane, and twice the signed area (...). A
    degenerate (zero-area) triangle gets w0 ≡ -1: it covers nothing."""
    x, y, z = tri.unbind(-1)  # (...,3) each
    x1, x2 = x.roll(-1, -1), x.roll(-2, -1)  # corners i+1, i+2 for each i
    y1, y2 = y.roll(-1, -1), y.roll(-2, -1)
    twice_area = (x[..., 1] - x[..., 0]) * (y[..., 2] - y[..., 0]) - (x[..., 2] - x[..., 0]) * (
        y[..., 1] - y[..., 0]
    )
    ok = twice_area.abs() > 1e-12
    inv = torch.where(ok, 1.0 / torch.where(ok, twice_area, 1.0), 0.0).unsqueeze(-1)
    # w_i is the signed area of (p, v_{i+1}, v_{i+2}) over the triangle's: linear in p = (x, y)
    a = (y1 - y2) * inv
    b = (x2 - x1) * inv
    c = (x1 * y2 - x2 * y1) * inv
    bary = torch.stack([a, b, c], dim=-1)  # (...,3,3)
    bary[..., 0, 2] = torch.where(ok, bary[..., 0, 2], -1.0)
    depth = (bary * z.unsqueeze(-1)).sum(-2, keepdim=True)  # z = Σ w_i z_i, also linear in p
    return torch.cat([bary, depth], dim=-2), twice_area


def shade(
    verts: torch.Tensor,
    faces: torch.Tensor,
    winner: torch.Tensor,
    bary: torch.Tensor,
) -> torch.Tensor:
    """Lambert-shaded RGB (P,3) in 0–1 of the covered pixels, whose triangles are `winner`
    (frame·F + face) and barycentrics `bary` (P,3)."""
    b, v = verts.shape[:2]
    normals = vertex_normals(verts, faces).reshape(b * v, 3)
    f = faces.shape[0]
    corners = faces.index_select(0, winner % f) + (winner // f * v).unsqueeze(1)  # (P,3)
    corner_n = normals.index_select(0, corners.view(-1)).view(-1, 3, 3)
    n = torch.nn.functional.normalize((bary.unsqueeze(-1) * corner_n).sum(-2), dim=-1)
    n = torch.where(n[..., 2:] < 0, -n, n)  # two-sided: whatever the winding, face the viewer
    light = torch.nn.functional.normalize(verts.new_tensor(LIGHT), dim=0)
    intensity = AMBIENT + (1 - AMBIENT) * (n @ light).clamp(min=0)
    return intensity.unsqueeze(-1) * verts.new_tensor(BODY_RGB)


def render_mesh(
    verts: torch.Tensor, faces: torch.Tensor, size: int, supersample: int = 1
) -> torch.Tensor:
    """(B,V,3) vertices in unit pixel coordinates (x, y in [0, 1] across the image, y downward;
    z toward the viewer, in the same unit), (F,3) faces → (B,size,size,3) uint8 RGB frames."""
    s = int(supersample)
    b, side = verts.shape[0], size * s
    covered, winner, bary = rasterize(verts * side, faces, side)
    # shading uses view-space normals: y back upward
    rgb = verts.new_tensor(BACKGROUND_RGB).repeat(b * side * side, 1)
    rgb[covered] = shade(verts * verts.new_tensor([1.0, -1.0, 1.0]), faces, winner, bary)
    rgb = rgb.view(b, side, side, 3)
    if s > 1:
        rgb = torch.nn.functional.avg_pool2d(rgb.permute(0, 3, 1, 2), s).permute(0, 2, 3, 1)
    return (rgb * 255).round().clamp(0, 255).to(torch.uint8)
