"""Site build machinery: execute chapters (``execute``), cache them by
environment (``cache``), and hook both into mkdocs (``plugin``)."""
