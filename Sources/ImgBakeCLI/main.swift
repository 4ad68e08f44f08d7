import ImgBake
