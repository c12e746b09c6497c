"""``course``: the course in nbgrader's format (:mod:`mlnn.tools.nbgrader_course`).

'course metadata' writes the nbgrader metadata into the notebooks; 'course source DIR' writes the
instructor's source version, with the worked solutions and the stored results the notebooks read,
into the nbgrader course directory DIR; 'course audit DIR' reports every submitted answer cell
that reaches a worked solution, a grader, the environment or the library routine its exercise
asks for, and every changed locked cell (exit code 1 if it flags anything); 'course
bench-autograde' times nbgrader's autograde of one student's eleven notebooks.
"""

from mlnn.tools import course_audit, course_bench, nbgrader_course


def register(subparsers):
    """Add ``course`` with its commands to ``subparsers``."""
    parser = subparsers.add_parser("course", help="the course in nbgrader's format",
                                   description=__doc__.split("\n\n")[1].replace("\n", " "))
    commands = parser.add_subparsers(dest="course_command",
                                     metavar="{metadata,source,audit,bench-autograde}")
    commands.required = True
    metadata = commands.add_parser("metadata",
                                   help="write the nbgrader metadata into notebooks/*.ipynb")
    metadata.set_defaults(func=run_metadata)
    source = commands.add_parser("source", help="write the source version into an nbgrader "
                                                "course directory")
    source.add_argument("directory", help="the nbgrader course directory")
    source.set_defaults(func=run_source)
    for command in (metadata, source):
        command.add_argument("--notebooks", default=nbgrader_course.NOTEBOOKS,
                             help="the course's notebooks (default: the checkout's notebooks/)")
    audit = commands.add_parser("audit", help="flag answer cells that reach past the exercise")
    audit.add_argument("directory", help="the nbgrader course directory (with release/ and "
                                         "submitted/)")
    audit.add_argument("--csv", help="where to write the report (default DIRECTORY/audit.csv)")
    audit.set_defaults(func=run_audit)
    bench = commands.add_parser("bench-autograde", help="time nbgrader's autograde of one "
                                                        "correct student")
    bench.add_argument("--course", help="build the course there (default: a temporary "
                                        "directory, removed afterwards)")
    bench.set_defaults(func=run_bench)


def run_metadata(args):
    changed = nbgrader_course.write_metadata(args.notebooks)
    print(f"nbgrader metadata written into {len(changed)} notebooks"
          + (f": {', '.join(changed)}" if changed else " (all were current)"))
    return 0


def run_source(args):
    stems = nbgrader_course.write_source(args.directory, args.notebooks)
    print(f"source version of {len(stems)} assignments written under {args.directory}/source")
    return 0


def run_audit(args):
    report = course_audit.write_report(args.directory, args.csv)
    print(course_audit.table(report))
    print(f"{len(report)} flags; report written to {args.csv or f'{args.directory}/audit.csv'}")
    return 1 if report else 0


def run_bench(args):
    return course_bench.main(args.course)
