"""helper attn6 (session 19): what the gen_*.py variant scripts share."""


def write_variant(t, src, dst, name, how):
    """Renames the kernel of the tile text t to name and writes it to dst, headed
    by a line saying how it was made from src."""
    old = t.split("\nkernel ")[1].split("(")[0]
    t = t.replace(old, name)
    head = "// helper attn6 (session 19): %s = %s on %s.\n" % (name, how, src.split("/")[-1])
    open(dst, "w").write(head + t)
