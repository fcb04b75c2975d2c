/**
 * Kiln's own `@bazel_skylib`: the files real workspaces load most, with bazel_skylib's names,
 * attributes and behaviour, written as ordinary Starlark over Kiln's rule API. A workspace that
 * declares a `bazel_skylib` repository of its own uses that one instead.
 */

const COMMON_SETTINGS = `"""Common build settings: flags and settings of each type, and the provider carrying their value."""

BuildSettingInfo = provider(
    doc = "A singleton provider that contains the raw value of a build setting",
    fields = {"value": "The value of the build setting in the current configuration."},
)

def _impl(ctx):
    return BuildSettingInfo(value = ctx.build_setting_value)

int_flag = rule(
    implementation = _impl,
    build_setting = config.int(flag = True),
    doc = "An int-typed build setting that can be set on the command line",
)

int_setting = rule(
    implementation = _impl,
    build_setting = config.int(),
    doc = "An int-typed build setting that cannot be set on the command line",
)

bool_flag = rule(
    implementation = _impl,
    build_setting = config.bool(flag = True),
    doc = "A bool-typed build setting that can be set on the command line",
)

bool_setting = rule(
    implementation = _impl,
    build_setting = config.bool(),
    doc = "A bool-typed build setting that cannot be set on the command line",
)

string_list_flag = rule(
    implementation = _impl,
    build_setting = config.string_list(flag = True),
    doc = "A string list-typed build setting that can be set on the command line",
)

string_list_setting = rule(
    implementation = _impl,
    build_setting = config.string_list(),
    doc = "A string list-typed build setting that cannot be set on the command line",
)

def _string_impl(ctx):
    allowed_values = ctx.attr.values
    value = ctx.build_setting_value
    if len(allowed_values) == 0 or value in allowed_values:
        return BuildSettingInfo(value = value)
    fail("Error setting " + str(ctx.label) + ": invalid value '" + value + "'. Allowed values are " + str(allowed_values))

_STRING_ATTRS = {
    "values": attr.string_list(
        doc = "The list of allowed values for this setting. An error is raised if any other value is given.",
    ),
}

string_flag = rule(
    implementation = _string_impl,
    build_setting = config.string(flag = True),
    attrs = _STRING_ATTRS,
    doc = "A string-typed build setting that can be set on the command line",
)

string_setting = rule(
    implementation = _string_impl,
    build_setting = config.string(),
    attrs = _STRING_ATTRS,
    doc = "A string-typed build setting that cannot be set on the command line",
)
`;

const PATHS = `"""Skylib module containing file path manipulation functions (paths.basename, paths.join, ...)."""

def _basename(p):
    return p.rpartition("/")[-1]

def _dirname(p):
    prefix, sep, _ = p.rpartition("/")
    if not prefix:
        return sep
    return prefix.rstrip("/")

def _is_absolute(path):
    return path.startswith("/") or (len(path) > 2 and path[1] == ":")

def _join(path, *others):
    result = path
    for p in others:
        if _is_absolute(p):
            result = p
        elif not result or result.endswith("/"):
            result += p
        else:
            result += "/" + p
    return result

def _normalize(path):
    if not path:
        return "."
    if path.startswith("//") and not path.startswith("///"):
        initial_slashes = 2
    elif path.startswith("/"):
        initial_slashes = 1
    else:
        initial_slashes = 0
    is_relative = (initial_slashes == 0)
    components = path.split("/")
    new_components = []
    for component in components:
        if component in ("", "."):
            continue
        if component == "..":
            if new_components and new_components[-1] != "..":
                new_components.pop()
            elif is_relative:
                new_components.append(component)
        else:
            new_components.append(component)
    path = "/".join(new_components)
    if not is_relative:
        path = ("/" * initial_slashes) + path
    return path or "."

_BASE_PREFIXES = ("/", "//")

def _is_normalized(str, look_for_same_level_references = True):
    if str in ("", ".", "..", "/", "//"):
        return str not in ("", ".") or not look_for_same_level_references
    for segment in str.split("/"):
        if segment == "..":
            return False
        if look_for_same_level_references and segment == ".":
            return False
    return not ("//" in str[2:] if str.startswith("//") else "//" in str)

def _relativize(path, start):
    segments = _normalize(path).split("/")
    start_segments = _normalize(start).split("/")
    if start_segments == ["."]:
        start_segments = []
    start_length = len(start_segments)
    if (path.startswith("/") != start.startswith("/") or len(segments) < start_length):
        fail("Path '%s' is not beneath '%s'" % (path, start))
    for ancestor_segment, segment in zip(start_segments, segments):
        if ancestor_segment != segment:
            fail("Path '%s' is not beneath '%s'" % (path, start))
    length = len(segments) - start_length
    result_segments = segments[-length:]
    return "/".join(result_segments)

def _replace_extension(p, new_extension):
    return _split_extension(p)[0] + new_extension

def _split_extension(p):
    b = _basename(p)
    last_dot_in_basename = b.rfind(".")
    if last_dot_in_basename <= 0:
        return (p, "")
    dot_distance_from_end = len(b) - last_dot_in_basename
    return (p[:-dot_distance_from_end], p[-dot_distance_from_end:])

def _starts_with(path_a, path_b):
    norm_a = _normalize(path_a)
    norm_b = _normalize(path_b)
    if len(norm_b) > len(norm_a):
        return False
    if not norm_a.startswith(norm_b):
        return False
    return len(norm_a) == len(norm_b) or norm_b.endswith("/") or norm_a[len(norm_b)] == "/"

paths = struct(
    basename = _basename,
    dirname = _dirname,
    is_absolute = _is_absolute,
    join = _join,
    normalize = _normalize,
    is_normalized = _is_normalized,
    relativize = _relativize,
    replace_extension = _replace_extension,
    split_extension = _split_extension,
    starts_with = _starts_with,
)
`;

const SELECTS = `"""Skylib module containing convenience functions over select(): with_or, with_or_dict, config_setting_group."""

def _with_or(input_dict, no_match_error = ""):
    return select(_with_or_dict(input_dict), no_match_error = no_match_error)

def _with_or_dict(input_dict):
    output_dict = {}
    for (key, value) in input_dict.items():
        if type(key) == type(()):
            for config_setting in key:
                if config_setting in output_dict.keys():
                    fail("key %s appears multiple times" % config_setting)
                output_dict[config_setting] = value
        else:
            if key in output_dict.keys():
                fail("key %s appears multiple times" % key)
            output_dict[key] = value
    return output_dict

def _config_setting_group(name, match_any = [], match_all = [], visibility = None):
    empty1 = not bool(len(match_any))
    empty2 = not bool(len(match_all))
    if (empty1 and empty2) or (not empty1 and not empty2):
        fail('Either "match_any" or "match_all" must be set, but not both.')
    _check_duplicates(match_any)
    _check_duplicates(match_all)

    if ((len(match_any) == 1 and match_any[0] == "//conditions:default") or
        (len(match_all) == 1 and match_all[0] == "//conditions:default")):
        _config_setting_always_true(name, visibility)
    elif not empty1:
        _config_setting_or_group(name, match_any, visibility)
    else:
        _config_setting_and_group(name, match_all, visibility)

def _check_duplicates(settings):
    seen = {}
    for setting in settings:
        if setting in seen:
            fail(setting + " is not allowed to appear twice in the same list")
        seen[setting] = True

def _remove_default_condition(settings):
    new_settings = []
    default_condition = str(Label("//conditions:default"))
    for setting in settings:
        if settings != "//conditions:default" and setting != default_condition:
            new_settings.append(setting)
    return new_settings

def _config_setting_or_group(name, settings, visibility):
    settings = _remove_default_condition(settings)
    if len(settings) == 1:
        native.alias(name = name, actual = settings[0], visibility = visibility)
        return
    # A chain of aliases: alias i resolves to setting i when it matches, else to alias i + 1.
    for i in range(len(settings) - 1):
        native.alias(
            name = name if i == 0 else "%s_%d" % (name, i),
            actual = select({
                settings[i]: settings[i],
                "//conditions:default": settings[-1] if i == len(settings) - 2 else ":%s_%d" % (name, i + 1),
            }),
            visibility = visibility,
        )

def _config_setting_and_group(name, settings, visibility):
    settings = _remove_default_condition(settings)
    if len(settings) == 1:
        native.alias(name = name, actual = settings[0], visibility = visibility)
        return
    # A chain of aliases: alias i resolves to alias i + 1 when setting i matches, else to setting i
    # (which does not match, so neither does the group).
    for i in range(len(settings) - 1):
        native.alias(
            name = name if i == 0 else "%s_%d" % (name, i),
            actual = select({
                settings[i]: settings[-1] if i == len(settings) - 2 else ":%s_%d" % (name, i + 1),
                "//conditions:default": settings[i],
            }),
            visibility = visibility,
        )

def _config_setting_always_true(name, visibility):
    name_on = name + "_stamp_binary_on_check"
    name_off = name + "_stamp_binary_off_check"
    native.config_setting(name = name_on, values = {"stamp": "1"})
    native.config_setting(name = name_off, values = {"stamp": "0"})
    return _config_setting_or_group(name, [":" + name_on, ":" + name_off], visibility)

selects = struct(
    with_or = _with_or,
    with_or_dict = _with_or_dict,
    config_setting_group = _config_setting_group,
)
`;

const BZL_LIBRARY = `"""Skylib module containing a library rule for aggregating Starlark files."""

StarlarkLibraryInfo = provider(
    "Information on contained Starlark rules.",
    fields = {
        "srcs": "Top level rules files.",
        "transitive_srcs": "Transitive closure of rules files required for interpretation of the srcs",
    },
)

def _bzl_library_impl(ctx):
    deps_files = [x.files for x in ctx.attr.deps]
    all_files = depset(ctx.files.srcs, order = "postorder", transitive = deps_files)
    return [
        DefaultInfo(files = all_files, runfiles = ctx.runfiles(transitive_files = all_files)),
        StarlarkLibraryInfo(srcs = ctx.files.srcs, transitive_srcs = all_files),
    ]

bzl_library = rule(
    implementation = _bzl_library_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".bzl", ".scl"], doc = "List of \`.bzl\` and \`.scl\` files that are processed to create this target."),
        "deps": attr.label_list(allow_files = [".bzl", ".scl"], doc = "List of other \`bzl_library\` or \`filegroup\` targets that are required by the Starlark files listed in \`srcs\`."),
    },
    doc = "Creates a logical collection of Starlark .bzl and .scl files.",
)
`;

const PUBLIC = 'load("//:bzl_library.bzl", "bzl_library")\n\npackage(default_visibility = ["//visibility:public"])\n';

/** The built-in repository's files, by path. */
export const BAZEL_SKYLIB_FILES: Readonly<Record<string, string>> = {
  'MODULE.bazel': 'module(name = "bazel_skylib")\n',
  BUILD: 'package(default_visibility = ["//visibility:public"])\n\nexports_files(["bzl_library.bzl"])\n',
  'bzl_library.bzl': BZL_LIBRARY,
  'lib/BUILD': `${PUBLIC}\nexports_files(["paths.bzl", "selects.bzl"])\n\nbzl_library(name = "paths", srcs = ["paths.bzl"])\n\nbzl_library(name = "selects", srcs = ["selects.bzl"])\n`,
  'lib/paths.bzl': PATHS,
  'lib/selects.bzl': SELECTS,
  'rules/BUILD': `${PUBLIC}\nexports_files(["common_settings.bzl"])\n\nbzl_library(name = "common_settings", srcs = ["common_settings.bzl"])\n`,
  'rules/common_settings.bzl': COMMON_SETTINGS,
};
