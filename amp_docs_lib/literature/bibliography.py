"""The bibliography (``amp_docs_lib/data/references.bib``) read with pybtex and formatted for the page."""

from __future__ import annotations

import re
from pathlib import Path

from amp_docs_lib.core.paths import DATA_DIR

# Library data, so that editing a reference re-executes the chapter (the cache key hashes the library).
BIB_PATH = DATA_DIR / "references.bib"

ARXIV_ID = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})(v\d+)?$")
DOI = re.compile(r"^10\.\d{4,9}/\S+$")


def arxiv_id_ok(identifier: str) -> bool:
    """Whether ``identifier`` is a well-formed new-style arXiv id (``YYMM.NNNNN``, optional ``vN``).

    The month must be 01-12; ids from 2015 on have five digits after the dot, earlier ones four.
    """
    m = ARXIV_ID.match(identifier) if isinstance(identifier, str) else None
    if m is None:
        return False
    yy, mm, number = int(m.group(1)), int(m.group(2)), m.group(3)
    return 1 <= mm <= 12 and len(number) == (5 if yy >= 15 else 4)


def load_bibliography(path: str | Path = BIB_PATH):
    """The BibTeX file parsed by pybtex (``pybtex.database.BibliographyData``)."""
    from pybtex.database import parse_file

    path = Path(path)
    if not path.exists():
        raise ValueError(f"no bibliography at {path}")
    return parse_file(str(path), bib_format="bibtex")


def _plain(text: str) -> str:
    from latexcodec import codec  # noqa: F401  registers the 'latex' codec

    text = text.encode("utf-8").decode("latex") if "\\" in text else text
    return text.replace("{", "").replace("}", "")


def ref_anchor(key: str) -> str:
    """The HTML id of ``key``'s entry in a rendered bibliography (what a citation links to)."""
    return f"ref-{key}"


def address(key: str, path: str | Path = BIB_PATH) -> tuple[str, str] | None:
    """Where ``key``'s source is read: ``(text, url)`` for its arXiv id, else its DOI, else its URL;
    None if the entry has none of them. ValueError for a key not in the bibliography."""
    data = load_bibliography(path)
    if key not in data.entries:
        raise ValueError(f"{key!r} is not in the bibliography; valid: {sorted(data.entries)}")
    f = data.entries[key].fields
    if f.get("eprint"):
        return f"arXiv:{f['eprint']}", f"https://arxiv.org/abs/{f['eprint']}"
    if f.get("doi"):
        return f"doi:{f['doi']}", f"https://doi.org/{f['doi']}"
    if f.get("url"):
        return f["url"], f["url"]
    return None


def _format_entry(key: str, entry) -> str:
    """One entry in Markdown: authors, *title*, venue and year, arXiv id or URL; it starts with an empty
    element whose id is :func:`ref_anchor` (``key``), so a citation can link to it."""
    persons = entry.persons.get("author", [])
    names, truncated = [], False
    for p in persons:
        first = " ".join(p.first_names + p.middle_names)
        last = " ".join(p.prelast_names + p.last_names)
        name = _plain(f"{first} {last}".strip())
        if name == "others":  # BibTeX's "and others": the list is truncated
            truncated = True
            continue
        names.append(name)
    if len(names) > 6 or truncated:
        authors = ", ".join(names[:6]) + ", et al"
    else:
        authors = ", ".join(names)
    f = entry.fields
    venue = f.get("booktitle") or f.get("journal") or f.get("institution") or f.get("organization") \
        or f.get("howpublished") or ""
    if f.get("volume"):
        venue += f" {f['volume']}" + (f"({f['number']})" if f.get("number") else "")
    parts = [f'<span id="{ref_anchor(key)}"></span>**[{key}]** {authors}.', f"*{_plain(f.get('title', ''))}*."]
    if venue:
        parts.append(_plain(venue) + ",")
    parts.append(f"{f.get('year', 'n.d.')}.")
    if f.get("eprint"):
        parts.append(f"arXiv:[{f['eprint']}](https://arxiv.org/abs/{f['eprint']}).")
    elif f.get("url"):
        parts.append(f"<{f['url']}>")
    if f.get("doi"):
        parts.append(f"doi:[{f['doi']}](https://doi.org/{f['doi']}).")
    if f.get("note"):
        parts.append(_plain(f["note"]) + ".")
    return " ".join(parts)


def bibliography(path: str | Path = BIB_PATH, keys=None) -> str:
    """The references as a Markdown list, sorted by key (all entries, or those in ``keys``)."""
    data = load_bibliography(path)
    wanted = sorted(data.entries) if keys is None else list(keys)
    missing = [k for k in wanted if k not in data.entries]
    if missing:
        raise ValueError(f"keys not in the bibliography: {missing}; valid: {sorted(data.entries)}")
    return "\n".join(f"- {_format_entry(k, data.entries[k])}" for k in wanted)


def identifiers(path: str | Path = BIB_PATH) -> dict[str, list[tuple[str, str]]]:
    """Every arXiv id and DOI in the bibliography: ``{'arxiv': [(key, id)], 'doi': [(key, doi)]}``."""
    data = load_bibliography(path)
    out: dict[str, list[tuple[str, str]]] = {"arxiv": [], "doi": []}
    for key, e in data.entries.items():
        if e.fields.get("eprint"):
            out["arxiv"].append((key, e.fields["eprint"]))
        if e.fields.get("doi"):
            out["doi"].append((key, e.fields["doi"]))
    return out
