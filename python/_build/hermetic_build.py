# SPDX-License-Identifier: MIT
"""The build backend of the hermetic Python package (PEP 517, PEP 660).

In-tree and standard library only, so that 'pip install ./python' needs
nothing from a package index: no setuptools, no wheel, no network, with or
without build isolation. It packs hermetic/*.py, the metadata and the
pytest plugin's entry point into a wheel, which is all the package is.
"""
import base64
import io
import hashlib
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _project():
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()

    def field(name):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % name, text, re.M)
        if not m:
            raise RuntimeError("pyproject.toml: no %s" % name)
        return m.group(1)

    return field("name"), field("version"), field("description"), field("requires-python")


def _metadata():
    name, version, summary, python = _project()
    readme = open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    return name, version, (
        "Metadata-Version: 2.1\n"
        "Name: %s\nVersion: %s\nSummary: %s\nLicense: MIT\nRequires-Python: %s\n"
        "Description-Content-Type: text/markdown\n\n%s" % (name, version, summary, python, readme)
    )


def _dist_info(name, version):
    return "%s-%s.dist-info" % (name, version)


def _meta_files():
    metadata = _metadata()[2]
    return {
        "METADATA": metadata,
        "WHEEL": "Wheel-Version: 1.0\nGenerator: hermetic_build\nRoot-Is-Purelib: true\nTag: %s\n" % TAG,
        "entry_points.txt": "[pytest11]\nhermetic = hermetic.pytest_plugin\n",
        "top_level.txt": "hermetic\n",
    }


def _write_wheel(wheel_directory, files):
    """files: (archive name, bytes) in order; RECORD is added last."""
    name, version = _project()[:2]
    wheel = "%s-%s-%s.whl" % (name, version, TAG)
    info = _dist_info(name, version)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
        record.append("%s/RECORD,," % info)
        z.writestr("%s/RECORD" % info, "\n".join(record) + "\n")
    return wheel


def _info_files(name, version):
    info = _dist_info(name, version)
    return [("%s/%s" % (info, k), v.encode()) for k, v in _meta_files().items()]


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _project()[:2]
    info = _dist_info(name, version)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for k, v in _meta_files().items():
        with open(os.path.join(metadata_directory, info, k), "w", encoding="utf-8") as f:
            f.write(v)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _project()[:2]
    pkg = os.path.join(HERE, "hermetic")
    files = []
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            files.append(("hermetic/%s" % f, open(os.path.join(pkg, f), "rb").read()))
    return _write_wheel(wheel_directory, files + _info_files(name, version))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """pip install -e: a .pth file that puts this directory on sys.path."""
    name, version = _project()[:2]
    pth = ("_%s_editable.pth" % name, (HERE + "\n").encode())
    return _write_wheel(wheel_directory, [pth] + _info_files(name, version))


def build_sdist(sdist_directory, config_settings=None):
    name, version = _project()[:2]
    base = "%s-%s" % (name, version)
    sdist = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/hermetic_build.py"] + [
            "hermetic/" + f for f in sorted(os.listdir(os.path.join(HERE, "hermetic"))) if f.endswith(".py")
        ]:
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata()[2].encode()
        info.size = len(data)


        t.addfile(info, io.BytesIO(data))
    return sdist
