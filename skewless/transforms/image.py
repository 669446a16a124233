"""`transform: image`: encoded image bytes decoded and resized in the graph (skewless/transforms/images.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skewless.transforms.base import Option, Transform
from skewless.transforms.images import decode_images


class Image(Transform):
    name = "image"
    unit_scale = True
    doc = "encoded JPEG/PNG/GIF/BMP bytes -> float32 pixels in [0, 1], `[height, width, channels]`"
    options = (
        Option("size", list[int] | None, Field(default=None, min_length=2, max_length=2),
               "`[height, width]` the images are resized to (required)"),
        Option("channels", Literal[1, 3], Field(default=3), "`1` (grayscale) or `3` (RGB)"),
    )
    required = ("size",)
    needs = "string"
    lists = False
    missing = False
    native_reason = "decoding and resizing images (tf.io.decode_image, tf.image.resize) has no Keras layers"
    image = True

    def check(self, feature) -> str | None:
        if min(feature.size) < 1:
            return f"size {feature.size} must be [height, width], both >= 1"
        return None

    def build(self, name: str, value, options: dict, vocabulary=None, columns=None) -> dict:
        return {name: decode_images(value, options["size"], options["channels"])}


TRANSFORM = Image()
