"""Build script: metadata from settings.ini (nbdev 2), plus the Cython hot-loop extension(s)."""
import os
import shlex
from configparser import ConfigParser

import setuptools
from packaging.version import Version  # pkg_resources is gone from current setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

expected = ("version description keywords author author_email license status min_python "
            "user lib_name git_url".split())
missing = [o for o in expected if o not in cfg]
if missing:
    raise SystemExit(f"settings.ini is missing: {missing}")

licenses = {"apache2": ("Apache Software License 2.0", "OSI Approved :: Apache Software License")}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable",
            "6 - Mature", "7 - Inactive"]
py_versions = "3.10 3.11 3.12 3.13".split()
min_python = cfg["min_python"]
lic = licenses.get(cfg["license"].lower(), (cfg["license"], None))

requirements = shlex.split(cfg.get("requirements", ""))
dev_requirements = shlex.split(cfg.get("dev_requirements", ""))
docs_requirements = shlex.split(cfg.get("docs_requirements", ""))
arviz_requirements = shlex.split(cfg.get("arviz_requirements", ""))   # to_arviz (optional: the core does not need it)
console_scripts = [o.strip() for o in cfg.get("console_scripts", "").split("\n") if o.strip()]


def extensions():
    """The Cython extension modules (posterior-ratio hot loop)."""
    import numpy as np
    from Cython.Build import cythonize

    np_random_lib = os.path.join(os.path.dirname(np.__file__), "random", "lib")
    common = dict(
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # -fno-math-errno: sqrt vectorises; -ffp-contract=off: no fused multiply-adds, so the AVX2 / AVX-512 clones of
        # the basis loops (_kernel.pyx) round exactly as the baseline build does; -fno-trapping-math: a conditional on
        # a floating-point compare may become a select, so the Gaussian's loop (rbf_exp's x < -708 tests) vectorises
        # (with traps assumed, GCC keeps the branch and runs that loop one element at a time). We never read the
        # floating-point exception flags, and no value changes: neither contraction nor reassociation is allowed.
        extra_compile_args=["-O3", "-fno-math-errno", "-ffp-contract=off", "-fno-trapping-math"],
        library_dirs=[np_random_lib],
        libraries=["npyrandom", "m"],
    )
    exts = [setuptools.Extension("rbf_bayes._kernel", ["rbf_bayes/_kernel.pyx"], **common),
            setuptools.Extension("rbf_bayes._rjmcmc", ["rbf_bayes/_rjmcmc.pyx"], **common),
            setuptools.Extension("rbf_bayes._bmars", ["rbf_bayes/_bmars.pyx"], **common),
            setuptools.Extension("rbf_bayes._smc", ["rbf_bayes/_smc.pyx"], **common)]
    return cythonize(exts, language_level=3, nthreads=os.cpu_count() or 1,
                     compiler_directives=dict(boundscheck=False, wraparound=False, cdivision=True,
                                              initializedcheck=False))


setuptools.setup(
    name=cfg["lib_name"],
    license=lic[0],
    classifiers=["Development Status :: " + statuses[int(cfg["status"])],
                 "Intended Audience :: " + cfg["audience"].title(),
                 "Natural Language :: " + cfg["language"].title()]
    + ["Programming Language :: Python :: " + o for o in py_versions
       if Version(o) >= Version(min_python)]
    + (["License :: " + lic[1]] if lic[1] else []),
    url=cfg["git_url"],
    packages=setuptools.find_packages(include=["rbf_bayes", "rbf_bayes.*"]),
    package_data={"rbf_bayes": ["data/*.csv", "data/*.md", "*.pyx", "*.pxd", "*.h"]},   # *.h: the loops in C
    include_package_data=True,
    install_requires=requirements,
    extras_require={"dev": dev_requirements, "docs": docs_requirements, "arviz": arviz_requirements},
    dependency_links=cfg.get("dep_links", "").split(),
    python_requires=">=" + cfg["min_python"],
    long_description=open("README.md", encoding="utf-8").read() if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    zip_safe=False,
    ext_modules=extensions(),
    # the four extensions are translated and compiled in parallel, one per core (pip install -e .: 79 -> 50 s, 2 cores)
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    entry_points={"console_scripts": console_scripts, "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    version=cfg["version"],
    description=cfg["description"],
    author=cfg["author"],
    author_email=cfg["author_email"],
    keywords=cfg["keywords"],
)
