"""One pinned table of the public files the presets and models need: where each comes from (a
Hugging Face repository, or a file of a GitHub repository), at which revision, its SHA-256 and size,
its licence, where it goes and who needs it.

Every value below was read from a public page (the Hub's file pages show "SHA256" for LFS files; the
commit pages show full commit hashes) or from the real bytes (the BC normaliser). Where a value
could not be found, it is `None` and the entry's `note` says so; nothing is guessed:

- a revision of `None` is fetched at the repository's current `main`, and the commit it resolved to
  is recorded in `<paths.checkpoints>/assets.lock.json`;
- a `sha256` of `None` is "unpinned": the first fetch prints ``unpinned: hash recorded on first
  fetch`` and records the file's SHA-256 in the lock file; every later fetch, bundle and bundle
  install must match that recorded hash (trust on first use, said so on the console).

A JSON file of the same fields may replace the table (`load_table`: a mirror's table, tests)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

from gesturebench.runtime.errors import ConfigError

Host = Literal["hub", "github"]
Root = Literal["checkpoints", "dataset"]
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HUB = "https://huggingface.co"
GITHUB = "https://raw.githubusercontent.com"

#: the `needed_by` tags: what reads the files, as the model and metric classes declare it
#: (their `public_assets`)
EMAGE_TAG = "model=emage"
GESTURELSM_TAG = "model=gesturelsm"
GESTURELSM_VOCAB_TAG = "model=gesturelsm dataset=beat2"
FGD_TAG = "metrics: FGD encoder=emage"
BC_TAG = "metrics: BC mean_speed_file=mean_vel_smplxflame_30.npy"


def gesturelsm_tag(variant: str) -> str:
    """The tag of GestureLSM's `variant` (the default's is `GESTURELSM_TAG`)."""
    return (
        GESTURELSM_TAG
        if variant == "shortcut_reflow"
        else f"{GESTURELSM_TAG} model.variant={variant}"
    )


@dataclass(frozen=True)
class Asset:
    """One public file: `path` in `repo` (`host` "hub": a Hugging Face repository of `repo_type`
    model/dataset/space; "github": a GitHub repository, fetched from its raw files over HTTPS) at
    `revision` (a full commit hash, or None: unknown), its `sha256` and `size` in bytes (None:
    unknown), installed at `dest` under the `root` folder (`paths.checkpoints`, or the dataset's
    `dataset.root`). `needed_by` names what needs it (``model=emage``,
    ``model=gesturelsm model.variant=diffusion``, ``metrics: FGD encoder=emage``, ...)."""

    key: str
    host: Host
    repo: str
    path: str
    dest: str
    revision: str | None
    sha256: str | None
    size: int | None
    licence: str
    needed_by: tuple[str, ...]
    repo_type: str = "model"
    root: Root = "checkpoints"
    note: str = ""

    @property
    def pinned(self) -> bool:
        """Whether the table knows the file's SHA-256."""
        return self.sha256 is not None

    def source(self, hub: str = HUB, github: str = GITHUB) -> str:
        """Where the file is fetched from (a URL), at its revision (or `main`)."""
        revision = self.revision or "main"
        if self.host == "github":
            return f"{github.rstrip('/')}/{self.repo}/{revision}/{self.path}"
        prefix = {"model": "", "dataset": "datasets/", "space": "spaces/"}[self.repo_type]
        return f"{hub.rstrip('/')}/{prefix}{self.repo}/resolve/{revision}/{self.path}"

    def document(self) -> dict:
        return {**asdict(self), "needed_by": list(self.needed_by)}


def _hub(key: str, repo: str, path: str, dest: str, needed_by: tuple[str, ...], **kw) -> Asset:
    return Asset(key=key, host="hub", repo=repo, path=path, dest=dest, needed_by=needed_by, **kw)


# --- EMAGE's audio-only release (H-Liu1997/emage_audio, Apache-2.0 on its model card) ----------
EMAGE_REPO = "H-Liu1997/emage_audio"
#: commit "Upload 11 files" (Dec 16, 2024): it added emage_vq/; only its .DS_Store changed since
EMAGE_VQ_COMMIT = "e1eb79b818f9ee96cf6667470ff95b82bf48b543"
EMAGE_LICENCE = "Apache-2.0 (the model card of huggingface.co/H-Liu1997/emage_audio)"
#: SHA-256 of the codecs' weights as their Hub file pages show them (only hands' was found)
EMAGE_VQ_SHA256 = {"hands": "72872387623e13c45dea2307d61b029506fd08f5b0eb0824600fc138ad0290fb"}
EMAGE_TOP_NOTE = (
    "added by the commit b04466b ('Upload 2 files', main when read); its full hash was not "
    "found, so the file is fetched at main and the commit recorded"
)
EMAGE = (
    _hub(
        "emage/config.json",
        EMAGE_REPO,
        "config.json",
        "emage/config.json",
        (EMAGE_TAG,),
        revision=None,
        sha256=None,
        size=710,
        licence=EMAGE_LICENCE,
        note=EMAGE_TOP_NOTE + "; SHA-256 not published for non-LFS files",
    ),
    _hub(
        "emage/pytorch_model.bin",
        EMAGE_REPO,
        "pytorch_model.bin",
        "emage/pytorch_model.bin",
        (EMAGE_TAG,),
        revision=None,
        sha256=None,
        size=None,
        licence=EMAGE_LICENCE,
        note=EMAGE_TOP_NOTE + "; about 556 MB; its SHA-256 was not found",
    ),
    *(
        _hub(
            f"emage/emage_vq/{part}/{name}",
            EMAGE_REPO,
            f"emage_vq/{part}/{name}",
            f"emage/emage_vq/{part}/{name}",
            (EMAGE_TAG,),
            revision=EMAGE_VQ_COMMIT,
            sha256=EMAGE_VQ_SHA256.get(part) if name == "pytorch_model.bin" else None,
            size=None,
            licence=EMAGE_LICENCE,
            note=(
                "SHA-256 from its Hub file page (about 9.64 MB)"
                if name == "pytorch_model.bin" and part in EMAGE_VQ_SHA256
                else "SHA-256 not found"
            ),
        )
        for part in ("face", "upper", "hands", "lower", "global")
        for name in ("config.json", "pytorch_model.bin")
    ),
)

# --- EMAGE's evaluation files: FGD encoder (Hub space), BC speed normaliser (GitHub) -----------
PANTOMATRIX_COMMIT = "0bbb03dfb969e8182cc4fe22facafda75f892dcc"
EVAL = (
    _hub(
        "emage_eval/AESKConv_240_100.bin",
        "H-Liu1997/EMAGE",
        "EMAGE/test_sequences/weights/AESKConv_240_100.bin",
        "emage_eval/EMAGE/test_sequences/weights/AESKConv_240_100.bin",
        (FGD_TAG,),
        repo_type="space",
        revision=None,
        sha256=None,
        size=None,
        licence="the space's card (huggingface.co/spaces/H-Liu1997/EMAGE); none read",
        note=(
            "where PantoMatrix 0bbb03d's emage_evaltools downloads it (at main); no SHA-256 or "
            "commit of this copy was found (BEAT2's beat_chinese_v2.0.0/weights/ copy shows "
            "5cd9566b…, 17.6 MB: another file, not assumed equal)"
        ),
    ),
    Asset(
        key="emage_eval/mean_vel_smplxflame_30.npy",
        host="github",
        repo="PantoMatrix/PantoMatrix",
        path="emage_evaltools/mean_vel_smplxflame_30.npy",
        dest="emage_eval/EMAGE/test_sequences/weights/mean_vel_smplxflame_30.npy",
        revision=PANTOMATRIX_COMMIT,
        sha256="53b5e48f2a7bf78c41a6de6395d6bb4f29018465ca5d0ee2820a2be3eebb7137",
        size=348,
        licence="PantoMatrix: no licence file (data: 55 mean joint speeds)",
        needed_by=(BC_TAG,),
        note="hash and size of the real bytes (the repository's file at that commit)",
    ),
)

# --- GestureLSM (pliu23/GestureLSM on the Hub; mean_std/ of its GitHub repository) -------------
GESTURELSM_REPO = "pliu23/GestureLSM"
GESTURELSM_LICENCE = "no licence stated (Hub card, GitHub repository)"
GESTURELSM_NOTE = (
    "uploaded by the commit e70c92c ('Upload 7 files'; main is 5aee2af, a README); full hashes not "
    "found: fetched at main, the commit recorded"
)
_VARIANT_FILES = {
    "shortcut_reflow.bin": (gesturelsm_tag("shortcut_reflow"),),
    "new_540_diffusion.bin": (gesturelsm_tag("diffusion"),),
    "meanflow.pth": (gesturelsm_tag("meanflow"),),
}
_GESTURELSM_SHA256 = {
    "shortcut_reflow.bin": "cf788ec9310b0a39f11c484c3aab363f256b0b58de27d7eeac9e115dc6cfe2ca"
}
_ALL_VARIANTS = tuple(n for names in _VARIANT_FILES.values() for n in names)
GESTURELSM = (
    *(
        _hub(
            f"gesturelsm/{name}",
            GESTURELSM_REPO,
            name,
            f"gesturelsm/{name}",
            needed,
            revision=None,
            sha256=_GESTURELSM_SHA256.get(name),
            size=None,
            licence=GESTURELSM_LICENCE,
            note=GESTURELSM_NOTE
            + (
                "; SHA-256 from its Hub file page (about 156 MB)"
                if name in _GESTURELSM_SHA256
                else ""
            ),
        )
        for name, needed in _VARIANT_FILES.items()
    ),
    *(
        _hub(
            f"gesturelsm/net_300000_{part}.pth",
            GESTURELSM_REPO,
            f"net_300000_{part}.pth",
            f"gesturelsm/net_300000_{part}.pth",
            _ALL_VARIANTS,
            revision=None,
            sha256=None,
            size=None,
            licence=GESTURELSM_LICENCE,
            note=GESTURELSM_NOTE + "; SHA-256 not found",
        )
        for part in ("upper", "hands", "lower")
    ),
    *(
        Asset(
            key=f"gesturelsm/mean_std/{name}",
            host="github",
            repo="andypinxinliu/GestureLSM",
            path=f"mean_std/{name}",
            dest=f"gesturelsm/mean_std/{name}",
            revision=None,
            sha256=None,
            size=None,
            licence=GESTURELSM_LICENCE,
            needed_by=_ALL_VARIANTS,
            note=(
                "read at commit fe124e0 (full hash not found): fetched at main, hash recorded on "
                "first fetch"
            ),
        )
        for name in (
            "beatx_2_330_mean.npy",
            "beatx_2_330_std.npy",
            "beatx_2_trans_mean.npy",
            "beatx_2_trans_std.npy",
        )
    ),
    _hub(
        "beat2/weights/vocab.pkl",
        "H-Liu1997/BEAT2",
        "beat_english_v2.0.0/weights/vocab.pkl",
        "weights/vocab.pkl",
        (GESTURELSM_VOCAB_TAG,),
        repo_type="dataset",
        root="dataset",
        revision=None,
        sha256=None,
        size=None,
        licence="Apache-2.0 (the dataset card of huggingface.co/datasets/H-Liu1997/BEAT2)",
        note=(
            "BEAT2's word table (prepare_beat2's download leaves *.pkl out); SHA-256 and "
            "commit not found"
        ),
    ),
)

# --- SC's sentence encoder (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0) ----------------
MINILM_COMMIT = "ce0dbbfefc15629ec53a6bf960220076679cef83"
#: the files sentence-transformers loads, in the official repository's layout (the tokenizer from
#: tokenizer.json: the repository's vocab.txt and special_tokens_map.json are not needed)
MINILM_FILES = (
    "modules.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
)
MINILM = tuple(
    _hub(
        f"all-MiniLM-L6-v2/{name}",
        "sentence-transformers/all-MiniLM-L6-v2",
        name,
        f"all-MiniLM-L6-v2/{name}",
        ("encoder=text_motion (SC)",),
        revision=MINILM_COMMIT,
        sha256=(
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
            if name == "model.safetensors"
            else None
        ),
        size=None,
        licence="Apache-2.0 (its model card)",
        note=(
            "SHA-256 as a 'Duplicate from sentence-transformers/all-MiniLM-L6-v2' repository's "
            "page shows it (the file unchanged since its upload); about 90.9 MB"
            if name == "model.safetensors"
            else "SHA-256 not found (small non-LFS file)"
        ),
    )
    for name in MINILM_FILES
)

TABLE: tuple[Asset, ...] = (*EMAGE, *EVAL, *GESTURELSM, *MINILM)


@dataclass(frozen=True)
class Table:
    """The assets by key (the production `TABLE`, or a JSON file's)."""

    assets: tuple[Asset, ...] = TABLE
    origin: str = "gesturebench.assets.table.TABLE"
    by_key: dict[str, Asset] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_key", {a.key: a for a in self.assets})

    def needed_by(self, tag: str) -> list[Asset]:
        """The assets whose `needed_by` names `tag` exactly."""
        return [a for a in self.assets if tag in a.needed_by]


def load_table(path: str | Path | None) -> Table:
    """The production table, or the JSON list of assets in `path` (the `Asset` fields); a wrong
    file is one `ConfigError` line naming it."""
    if path is None or str(path) == "":
        return Table()
    path = Path(path).expanduser()
    names = {f.name for f in fields(Asset)}
    try:
        rows = json.loads(path.read_text())
        assets = []
        for row in rows:
            unknown = set(row) - names
            if unknown:
                raise ValueError(f"unknown fields {sorted(unknown)}")
            assets.append(Asset(**{**row, "needed_by": tuple(row.get("needed_by", ()))}))
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"task.table={path}: not a table of assets ({exc})") from None
    return Table(tuple(assets), str(path))


def pinned(repo: str, folder: str) -> dict[str, str]:
    """The pinned SHA-256 of the production table's files of Hub repository `repo` installed under
    `<checkpoints>/<folder>/`, by their path there (a `HubFiles.sha256`)."""
    prefix = f"{folder}/"
    return {
        a.dest.removeprefix(prefix): a.sha256
        for a in TABLE
        if a.host == "hub" and a.repo == repo and a.sha256 and a.dest.startswith(prefix)
    }


#: a file a configuration needs, with the path its options put it at (None: the table's place)
Need = tuple[Asset, Path | None]
