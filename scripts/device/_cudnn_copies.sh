# Sourced by the explain device scripts and search_data.sh: the python to use ($PY or python3), and the two cuDNN copies
# of the GPU machine: $pipdir (the nvidia-cudnn wheel's lib directory) and $apt (the apt packages').
py=${PY:-$(command -v python3)}
apt=/usr/lib/x86_64-linux-gnu
pipdir=$($py -c 'import os, nvidia.cudnn as m; print(os.path.join(os.path.dirname(m.__file__), "lib"))' 2>/dev/null \
         || $py -c 'import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], "cudnn", "lib"))')
