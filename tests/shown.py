"""What a grader printed, as one string: standard output (PASS) and standard error (NOT YET)
together, each line unwrapped (the graders wrap long lines at spaces for JupyterLab)."""


def shown(capsys):
    out, err = capsys.readouterr()
    return (out + err).replace("\n" + " " * 9, " ")
