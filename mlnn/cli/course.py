"""``course``: the course in nbgrader's format (:mod:`mlnn.tools.nbgrader_course`).

'course metadata' writes the nbgrader metadata into the notebooks; 'course source DIR' writes the
instructor's source version, with the worked solutions, into the nbgrader course directory DIR.
"""

from mlnn.tools.nbgrader_course import write_metadata, write_source


def register(subparsers):
    """Add ``course`` with its two commands to ``subparsers``."""
    parser = subparsers.add_parser("course", help="the course in nbgrader's format",
                                   description=__doc__.split("\n\n")[1].replace("\n", " "))
    commands = parser.add_subparsers(dest="course_command", metavar="{metadata,source}")
    commands.required = True
    commands.add_parser("metadata", help="write the nbgrader metadata into notebooks/*.ipynb") \
        .set_defaults(func=run_metadata)
    source = commands.add_parser("source", help="write the source version into an nbgrader "
                                                "course directory")
    source.add_argument("directory", help="the nbgrader course directory")
    source.set_defaults(func=run_source)


def run_metadata(args):
    changed = write_metadata()
    print(f"nbgrader metadata written into {len(changed)} notebooks"
          + (f": {', '.join(changed)}" if changed else " (all were current)"))
    return 0


def run_source(args):
    stems = write_source(args.directory)
    print(f"source version of {len(stems)} assignments written under {args.directory}/source")
    return 0
