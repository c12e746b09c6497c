"""``course``: the course as an nbgrader course (:mod:`mlnn.tools.nbgrader_course`) and its
grading (:mod:`mlnn.tools.course_grade`).

'course metadata' writes the nbgrader metadata into the notebooks; 'course source DIR' writes
the instructor's source version (the worked solutions, the written answers' keys, the stored
results the notebooks read) into the nbgrader course directory DIR; 'course grade DIR' grades
every submission, each answer cell in a confined process of its own, into nbgrader's gradebook
(or grades.csv) with a report of every exercise and flag; 'course bench' times the grading of
one student's eleven notebooks.
"""


def register(subparsers):
    """Add ``course`` with its commands to ``subparsers`` (importing none of their tools)."""
    parser = subparsers.add_parser("course", help="the course in nbgrader's format",
                                   description=__doc__.split("\n\n")[1].replace("\n", " "))
    commands = parser.add_subparsers(dest="course_command",
                                     metavar="{metadata,source,grade,bench}")
    commands.required = True
    metadata = commands.add_parser("metadata",
                                   help="write the nbgrader metadata into notebooks/*.ipynb")
    metadata.set_defaults(func=run_metadata)
    source = commands.add_parser("source", help="write the source version into an nbgrader "
                                                "course directory")
    source.add_argument("directory", help="the nbgrader course directory")
    source.set_defaults(func=run_source)
    for command in (metadata, source):
        command.add_argument("--notebooks", default=None,
                             help="the course's notebooks (default: the checkout's notebooks/)")
    grade = commands.add_parser("grade", help="grade every submission of the course")
    grade.add_argument("directory", help="the nbgrader course directory (with release/ and "
                                         "submitted/)")
    grade.add_argument("--draw", type=int, default=None,
                       help="the seed of the graders' random cases (default: a new secret one, "
                            "printed at the end)")
    grade.add_argument("--jobs", type=int, default=None,
                       help="submissions graded at once (default: one per core)")
    grade.set_defaults(func=run_grade)
    bench = commands.add_parser("bench", help="time the grading of one student's eleven "
                                              "notebooks (the worked solutions)")
    bench.set_defaults(func=run_bench)


def run_metadata(args):
    from mlnn.tools import nbgrader_course
    changed = nbgrader_course.write_metadata(args.notebooks or nbgrader_course.NOTEBOOKS)
    print(f"nbgrader metadata written into {len(changed)} notebooks"
          + (f": {', '.join(changed)}" if changed else " (all were current)"))
    return 0


def run_source(args):
    from mlnn.tools import nbgrader_course
    stems = nbgrader_course.write_source(args.directory,
                                         args.notebooks or nbgrader_course.NOTEBOOKS)
    print(f"source version of {len(stems)} assignments written under {args.directory}/source")
    return 0


def run_grade(args):
    from mlnn.tools import course_grade
    return course_grade.main(args.directory, args.draw, args.jobs)


def run_bench(args):
    from mlnn.tools import course_bench
    return course_bench.main()
