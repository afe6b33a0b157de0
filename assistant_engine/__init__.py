"""The engine's packages that a product must not meet at the top level of its
virtualenv (`foundation`, `organizations`, `providers`, `tools`, `web`,
`surfaces`): one namespace, like Wagtail's `wagtail.admin`. A product imports
none of them: its one public module is `assistant.kit`."""
