/**
 * The global name a .bzl value (aspect, macro, repository rule) is exported under: set once, by the
 * first global it is bound to in the file that made it, as Bazel's StarlarkExportable.
 */
export class BzlExport {
  private exported: { readonly name: string; readonly bzlLabel: string } | undefined;
  /** The global name and the label of the .bzl file, once exported. */
  get value(): { readonly name: string; readonly bzlLabel: string } | undefined {
    return this.exported;
  }
  set(name: string, bzlLabel: string): void {
    this.exported ??= { name, bzlLabel };
  }
}
