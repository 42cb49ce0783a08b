"""srcreview: does each setting of a vLLM serving recipe take effect at the pinned revision?"""

__version__ = "0.1.0"
