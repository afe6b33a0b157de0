// The page's strings in the person's language. Django's JavaScript catalog
// (/jsi18n/, a deferred classic script that runs before these modules) defines
// window.gettext; without it (a test page, a failed load) the text stays English.
// `manage.py makemessages -d djangojs` finds the strings by these names.

export const gettext = (text) => (typeof window.gettext === 'function' ? window.gettext(text) : text);

export const ngettext = (singular, plural, count) => (typeof window.ngettext === 'function'
  ? window.ngettext(singular, plural, count) : (count === 1 ? singular : plural));

// "%(name)s" placeholders, as in the Python catalog, so translators can move them.
export const interpolate = (format, values) => format.replace(/%\((\w+)\)s/g, (match, name) => (
  name in values ? String(values[name]) : match));
