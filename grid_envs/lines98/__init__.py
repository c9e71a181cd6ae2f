"""Lines98 (Color Lines): move balls along free paths, line up five of a colour to clear them."""
