"""Container images as the scheduler and the simulator see them: reference normalisation
(``names``), the layer catalogue (``catalogue``), seeded image assignment for trace pods
(``assign``), what a plugin can know about layers on a node from the API (``layer_index``), the
pull-time model (``pull_model``) and layer lookups in registries (``registry``)."""
